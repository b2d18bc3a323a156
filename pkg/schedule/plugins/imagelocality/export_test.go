package imagelocality

// NormalizedImageName exposes normalizedImageName to the external tests.
var NormalizedImageName = normalizedImageName
