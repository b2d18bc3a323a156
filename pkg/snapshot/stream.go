package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The fast path for JSON snapshots (docs/design.md#the-snapshot-file): the
// file is read in chunks and split into its objects without decoding them,
// the objects are decoded on every core, and added to the builder in the
// order they were read. No copy of the file is kept: a chunk is read over
// once it is split, a batch's bytes reused once decoded. It reads what `kubectl gang snapshot -o json`,
// `kubectl get -o json` and the API server write: streams of JSON objects,
// v1 Lists and typed lists. Anything else, and any input with an error, is
// left to the one-document-at-a-time path (addStream), which reads it again
// and says what is wrong exactly as it always has; so the fast path only has
// to be sure of what it accepts.

// errSlowPath says the fast path declines the input.
var errSlowPath = errors.New("left to the slow path")

// chunkSize is about how much of the file is read at a time (a variable
// for the tests).
var chunkSize = 4 << 20

// batchBytes bounds the objects handed to a worker at once.
const batchBytes = 256 << 10

// item is one object of the stream, not decoded yet.
type item struct {
	raw []byte
	// listItem is the item kind of a typed list (PodList: Pod), for items
	// that do not carry their own apiVersion and kind; empty when the list
	// is a v1 List, not a list, or its kind is not known yet.
	listItem schema.GroupVersionKind
	// inList says whether it is a list's item (a list's item without a kind
	// takes the list's).
	inList bool
	// index counts the items of the stream from 1.
	index int
}

// batch is a run of items decoded by one worker; their bytes are copied
// into data, so that the reader reuses its buffer.
type batch struct {
	items []item
	data  []byte
	keep  []func(*builder)
	// err is the first item that could not be decoded, and why.
	err     error
	errItem int
	done    chan struct{}
}

// batchData and batchItems recycle the batches' buffers.
var (
	batchData  = sync.Pool{New: func() any { return new([]byte) }}
	batchItems = sync.Pool{New: func() any { return new([]item) }}
)

// decodeError is an item of a stream that could not be decoded: the n-th
// (1-based) of the stream, and why.
type decodeError struct {
	item int
	err  error
}

func (e *decodeError) Error() string { return e.err.Error() }

// decodeFunc decodes one item and returns what adds it to a builder.
type decodeFunc func(*item) (func(*builder), error)

// decodeInParallel adds the objects split emits to b, decoding them on
// every core, with a decoder newDecode makes for each worker, and adding
// them in the order split emitted them. It
// returns split's error, or the first item that could not be decoded as a
// *decodeError (b may then hold some objects), and how many objects were
// added.
func (b *builder) decodeInParallel(split func(emit func(item) bool) error, newDecode func() decodeFunc) (int, error) {
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *batch, 2*workers)
	order := make(chan *batch, 4*workers)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			decode := newDecode()
			for bt := range work {
				if !failed.Load() {
					bt.decode(decode)
					if bt.err != nil {
						failed.Store(true)
					}
				}
				data, items := bt.data[:0], bt.items
				clear(items)
				items = items[:0]
				bt.items, bt.data = nil, nil
				batchData.Put(&data)
				batchItems.Put(&items)
				close(bt.done)
			}
		})
	}
	var splitErr error
	go func() {
		defer close(order)
		defer close(work)
		var bt *batch
		n := 0
		flush := func() {
			if bt != nil {
				order <- bt
				work <- bt
				bt = nil
			}
		}
		splitErr = split(func(it item) bool {
			if failed.Load() {
				return false
			}
			if bt != nil && len(bt.data)+len(it.raw) > cap(bt.data) {
				flush()
			}
			if bt == nil {
				data := *batchData.Get().(*[]byte)
				if cap(data) < max(batchBytes, len(it.raw)) {
					data = make([]byte, 0, max(batchBytes, len(it.raw)))
				}
				bt = &batch{data: data, items: *batchItems.Get().(*[]item), done: make(chan struct{})}
			}
			// Copied: the reader reads the next chunk over it.
			start := len(bt.data)
			bt.data = append(bt.data, it.raw...)
			it.raw = bt.data[start:len(bt.data):len(bt.data)]
			n++
			it.index = n
			bt.items = append(bt.items, it)
			return true
		})
		flush()
	}()
	added := 0
	var decodeErr error
	for bt := range order {
		<-bt.done
		if bt.err != nil && decodeErr == nil {
			decodeErr = &decodeError{item: bt.errItem, err: bt.err}
		}
		if failed.Load() {
			continue // drain
		}
		for _, keep := range bt.keep {
			keep(b)
		}
		b.objects += len(bt.keep)
		added += len(bt.keep)
		bt.keep = nil
	}
	wg.Wait()
	if splitErr != nil && !errors.Is(splitErr, errStopped) {
		return added, splitErr
	}
	return added, decodeErr
}

// errStopped is what split returns when emit stopped it.
var errStopped = errors.New("stopped")

// decode decodes the batch's items, stopping at the first that cannot be.
func (bt *batch) decode(decode decodeFunc) {
	bt.keep = make([]func(*builder), 0, len(bt.items))
	for i := range bt.items {
		keep, err := decode(&bt.items[i])
		if err != nil {
			bt.err, bt.errItem = err, bt.items[i].index
			return
		}
		bt.keep = append(bt.keep, keep)
	}
}

// loadJSON adds the objects of a JSON stream to b, decoding them on every
// core. It returns errSlowPath, or an I/O error, when the stream is
// anything but well-formed objects of the shapes it knows; b may then hold
// some objects, so the caller starts again with a new builder.
func (b *builder) loadJSON(r io.Reader) error {
	added, err := b.decodeInParallel(func(emit func(item) bool) error { return splitJSON(r, emit) }, func() decodeFunc { return newJSONDecoder().decode })
	var decodeErr *decodeError
	switch {
	case errors.As(err, &decodeErr), errors.Is(err, errSlowPath), err == nil && added == 0:
		return errSlowPath
	}
	return err
}

// errDeclined is a JSON item the fast path leaves to the slow one.
var errDeclined = errors.New("declined")

// jsonItemKind returns the kind of one object of a JSON stream, or
// errDeclined.
func jsonItemKind(it *item) (schema.GroupVersionKind, error) {
	apiVersion, kind, ok := objectHeader(it.raw)
	if !ok {
		return schema.GroupVersionKind{}, errDeclined
	}
	gvk := it.listItem
	if apiVersion != "" && kind != "" {
		gvk = schema.FromAPIVersionAndKind(apiVersion, kind)
	} else if !it.inList {
		return schema.GroupVersionKind{}, errDeclined
	}
	if gvk.Kind == "" || strings.HasSuffix(gvk.Kind, "List") {
		return schema.GroupVersionKind{}, errDeclined
	}
	return gvk, nil
}

// objectHeader finds the apiVersion and kind of a JSON object by its
// top-level keys, as encoding/json would fill them in. It reports false for
// what it cannot be sure of: a key spelled in another case or escaped (which
// encoding/json matches too), a key given twice, a value not a plain string.
func objectHeader(raw []byte) (apiVersion, kind string, ok bool) {
	var seenVersion, seenKind bool
	ok = eachKey(raw, func(key []byte, value []byte) bool {
		var target *string
		switch {
		case string(key) == "apiVersion":
			if seenVersion {
				return false
			}
			seenVersion, target = true, &apiVersion
		case string(key) == "kind":
			if seenKind {
				return false
			}
			seenKind, target = true, &kind
		case bytes.EqualFold(key, []byte("apiVersion")), bytes.EqualFold(key, []byte("kind")), bytes.IndexByte(key, '\\') >= 0:
			return false
		default:
			return true
		}
		if value[0] == 'n' { // null: as absent
			return true
		}
		if value[0] != '"' || bytes.IndexByte(value, '\\') >= 0 {
			return false
		}
		*target = string(value[1 : len(value)-1])
		return true
	})
	return apiVersion, kind, ok
}

// eachKey calls f with each top-level key of the JSON object raw (without
// quotes) and its value, until f returns false; it reports false then, or
// when raw is not an object. The values are not checked: the typed decoder
// checks the whole object.
func eachKey(raw []byte, f func(key, value []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return false
		}
		end, st := skipValue(raw, i)
		if st != complete {
			return false
		}
		key := raw[i+1 : end-1]
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		end, st = skipValue(raw, i)
		if st != complete {
			return false
		}
		if !f(key, raw[i:end]) {
			return false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// scanStatus is what skipValue found.
type scanStatus int

const (
	complete   scanStatus = iota
	incomplete            // the data ends inside the value
	malformed             // not a JSON value
)

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i]. It finds
// where the value ends in well-formed JSON and does not check the rest: the
// typed decoder checks every value it is given.
func skipValue(b []byte, i int) (int, scanStatus) {
	if i >= len(b) {
		return i, incomplete
	}
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			j := i + 1
			for {
				k := bytes.IndexByte(b[j:], '"')
				if k < 0 {
					return i, incomplete
				}
				j += k
				// An escaped quote follows an odd run of backslashes.
				n := 0
				for b[j-1-n] == '\\' {
					n++
				}
				if n%2 == 0 {
					break
				}
				j++
			}
			i = j + 1
			if depth == 0 {
				return i, complete
			}
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, malformed
			}
			depth--
			i++
			if depth == 0 {
				return i, complete
			}
		case ' ', '\t', '\n', '\r', ',', ':':
			if depth == 0 {
				return i, malformed
			}
			i++
		default:
			if depth > 0 {
				i++
				continue
			}
			// A number, true, false or null: it ends at a delimiter.
			j := i
			for j < len(b) && !isDelimiter(b[j]) {
				j++
			}
			if j == len(b) {
				return i, incomplete
			}
			return j, complete
		}
	}
	return i, incomplete
}

func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', '{', '}', '[', ']', '"':
		return true
	}
	return false
}

// splitter reads a JSON stream in chunks. buf[pos:] is what is not consumed
// yet, and buf[mark:] what must be kept when more is read; a value that runs
// past the end of buf is scanned again from its start once more is read.
type splitter struct {
	r         io.Reader
	buf       []byte
	pos, mark int
	eof       bool
	err       error
}

// more reads more input over what is before buf[mark:], and reports
// whether it read anything. Positions into buf move down by mark.
func (s *splitter) more() bool {
	if s.eof {
		return false
	}
	tail := s.buf[s.mark:]
	nb := s.buf[:len(tail)]
	if cap(s.buf)-len(tail) < max(chunkSize/2, len(tail), 1) {
		// A value longer than a chunk at least doubles the read, so that
		// scanning it again from its start costs linear time overall.
		nb = make([]byte, len(tail), max(chunkSize, 4*len(tail)))
	}
	copy(nb, tail)
	n, err := io.ReadFull(s.r, nb[len(tail):cap(nb)])
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		s.eof = true
	case err != nil:
		s.eof, s.err = true, err
	}
	s.buf = nb[:len(tail)+n]
	s.pos -= s.mark
	s.mark = 0
	return n > 0
}

// space skips white space, reading more as needed, and returns the next
// byte, or false at the end of the input.
func (s *splitter) space() (byte, bool) {
	for {
		s.pos = skipSpace(s.buf, s.pos)
		if s.pos < len(s.buf) {
			return s.buf[s.pos], true
		}
		if !s.more() {
			return 0, false
		}
	}
}

// value returns the value at buf[pos:] and moves past it.
func (s *splitter) value() ([]byte, bool) {
	for {
		end, st := skipValue(s.buf, s.pos)
		switch st {
		case complete:
			v := s.buf[s.pos:end]
			s.pos = end
			return v, true
		case malformed:
			return nil, false
		}
		if s.mark > s.pos {
			s.mark = s.pos
		}
		if !s.more() {
			return nil, false
		}
	}
}

// slow is errSlowPath, or the read error that ended the input.
func (s *splitter) slow() error {
	if s.err != nil {
		return s.err
	}
	return errSlowPath
}

// splitJSON splits a stream of JSON values into objects and calls emit with
// each, in order, until emit returns false. A List's (or typed list's)
// items are emitted one by one; other objects whole. It returns errSlowPath
// for anything it does not take, and read errors.
func splitJSON(r io.Reader, emit func(item) bool) error {
	s := &splitter{r: r}
	for {
		s.mark = s.pos
		c, ok := s.space()
		if !ok {
			return s.err
		}
		if c != '{' {
			return errSlowPath
		}
		if err := s.object(emit); err != nil {
			return err
		}
	}
}

// object splits one top-level object at buf[pos].
func (s *splitter) object(emit func(item) bool) error {
	// The object is kept from its start (mark) until it is known to be
	// a list.
	s.mark = s.pos
	s.pos++
	var apiVersion, kind string
	seen := map[string]bool{}
	sawItems := false
	slow := s.slow
	for first := true; ; first = false {
		c, ok := s.space()
		if !ok {
			return slow()
		}
		if c == '}' && first {
			s.pos++
			break
		}
		if c != '"' {
			return slow()
		}
		keyRaw, ok := s.value()
		if !ok {
			return slow()
		}
		key := string(keyRaw[1 : len(keyRaw)-1])
		if c, ok = s.space(); !ok || c != ':' {
			return slow()
		}
		s.pos++
		if _, ok = s.space(); !ok {
			return slow()
		}
		switch key {
		case "apiVersion", "kind", "items":
			if seen[key] {
				return slow()
			}
			seen[key] = true
		default:
			if strings.EqualFold(key, "apiVersion") || strings.EqualFold(key, "kind") || strings.EqualFold(key, "items") || strings.IndexByte(key, '\\') >= 0 {
				return slow()
			}
		}
		switch key {
		case "items":
			if s.buf[s.pos] != '[' {
				return slow()
			}
			// The object is a list: what was read before its items is
			// not needed again.
			sawItems = true
			listItem := schema.GroupVersionKind{}
			if strings.HasSuffix(kind, "List") && kind != "List" && apiVersion != "" {
				listItem = schema.FromAPIVersionAndKind(apiVersion, strings.TrimSuffix(kind, "List"))
			}
			if err := s.items(listItem, emit); err != nil {
				return err
			}
			s.mark = s.pos
		default:
			v, ok := s.value()
			if !ok {
				return slow()
			}
			switch {
			case key == "apiVersion" || key == "kind":
				if v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
					return slow()
				}
				if key == "kind" {
					kind = string(v[1 : len(v)-1])
				} else {
					apiVersion = string(v[1 : len(v)-1])
				}
			case !json.Valid(v):
				return slow()
			}
		}
		c, ok = s.space()
		if !ok {
			return slow()
		}
		s.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			return slow()
		}
	}
	if sawItems {
		// A list: its kind, written before or after the items, must say
		// so, or the slow path has something to say.
		if !strings.HasSuffix(kind, "List") || apiVersion == "" {
			return errSlowPath
		}
		return nil
	}
	if !emit(item{raw: s.buf[s.mark:s.pos]}) {
		return errStopped
	}
	return nil
}

// items splits a list's items, buf[pos] being its '['.
func (s *splitter) items(listItem schema.GroupVersionKind, emit func(item) bool) error {
	slow := s.slow
	s.pos++
	for first := true; ; first = false {
		c, ok := s.space()
		if !ok {
			return slow()
		}
		if c == ']' && first {
			s.pos++
			return nil
		}
		if c != '{' {
			return slow()
		}
		s.mark = s.pos
		v, ok := s.value()
		if !ok {
			return slow()
		}
		if !emit(item{raw: v, listItem: listItem, inList: true}) {
			return errStopped
		}
		s.mark = s.pos
		if c, ok = s.space(); !ok {
			return slow()
		}
		s.pos++
		switch c {
		case ']':
			return nil
		case ',':
		default:
			return slow()
		}
	}
}
