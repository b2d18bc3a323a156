package snapshot

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// The binary snapshot file (docs/design.md#the-snapshot-file): the objects
// of the List that WriteJSON writes, in the same order, each in the API
// server's own protobuf encoding (the Marshal of its k8s.io/api type), or,
// for PodGroups and the gang systems' other objects (custom resources,
// which have none), as JSON.
//
//	file    = magic version record* end
//	magic   = "\x89KGSNAP\n"
//	version = 0x01
//	record  = uvarint(len(body)) body          (len > 0)
//	body    = string(apiVersion) string(kind) encoding bytes(object)
//	string  = uvarint(len) bytes
//	encoding = 0x00 protobuf | 0x01 JSON
//	end     = uvarint(0) uvarint(number of records)
//
// The end record tells a whole file from one cut short at a record's end.

// BinaryMagic starts every binary snapshot file: --snapshot recognises it
// by these bytes, which no JSON or YAML starts with.
const BinaryMagic = "\x89KGSNAP\n"

// binaryVersion is the version of the format this build writes and reads.
const binaryVersion = 1

// The encodings of a record's object.
const (
	encodingProtobuf = 0
	encodingJSON     = 1
)

// protoMarshaler is what the k8s.io/api types generate for protobuf.
type protoMarshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// protoUnmarshaler is the other half.
type protoUnmarshaler interface {
	Unmarshal([]byte) error
}

// WriteBinary writes the snapshot as a binary snapshot file. The same
// snapshot always writes the same bytes: the order is ToList's, and the
// protobuf encoding of the API types writes map keys sorted.
func WriteBinary(w io.Writer, s *schedule.Snapshot) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(BinaryMagic)
	bw.WriteByte(binaryVersion)
	var body []byte
	records := 0
	err := eachObject(s, func(gvk schema.GroupVersionKind, obj runtime.Object) error {
		body = body[:0]
		body = appendString(body, gvk.GroupVersion().String())
		body = appendString(body, gvk.Kind)
		switch o := obj.(type) {
		case protoMarshaler:
			body = append(body, encodingProtobuf)
			size := o.Size()
			body = binary.AppendUvarint(body, uint64(size))
			start := len(body)
			body = append(body, make([]byte, size)...)
			if _, err := o.MarshalToSizedBuffer(body[start:]); err != nil {
				return fmt.Errorf("encoding %s: %w", gvk.Kind, err)
			}
		case *unstructured.Unstructured:
			data, err := o.MarshalJSON()
			if err != nil {
				return fmt.Errorf("encoding %s: %w", gvk.Kind, err)
			}
			body = append(body, encodingJSON)
			body = binary.AppendUvarint(body, uint64(len(data)))
			body = append(body, data...)
		default:
			return fmt.Errorf("encoding %s: no binary encoding for %T", gvk.Kind, obj)
		}
		var n [binary.MaxVarintLen64]byte
		bw.Write(n[:binary.PutUvarint(n[:], uint64(len(body)))])
		_, err := bw.Write(body)
		records++
		return err
	})
	if err != nil {
		return err
	}
	var end []byte
	end = binary.AppendUvarint(end, 0)
	end = binary.AppendUvarint(end, uint64(records))
	bw.Write(end)
	return bw.Flush()
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// isBinary says whether data starts a binary snapshot file.
func isBinary(data []byte) bool {
	return bytes.HasPrefix(data, []byte(BinaryMagic))
}

// loadBinary adds the objects of a binary snapshot file to b, decoding
// them on every core.
func (b *builder) loadBinary(source string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)
	head := make([]byte, len(BinaryMagic)+1)
	if _, err := io.ReadFull(br, head); err != nil || !isBinary(head) {
		return &InputError{Source: source, Err: errors.New("not a binary snapshot")}
	}
	if v := head[len(head)-1]; v != binaryVersion {
		return &InputError{Source: source, Err: fmt.Errorf("binary snapshot of version %d; this build reads version %d (write it again with this build: kubectl gang snapshot -o protobuf)", v, binaryVersion)}
	}
	records := 0
	var cutShort error
	split := func(emit func(item) bool) error {
		var raw []byte
		for {
			n, err := binary.ReadUvarint(br)
			if err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					cutShort = fmt.Errorf("the snapshot looks cut short: it ends after %d object(s), without the end record", records)
					return nil
				}
				return err
			}
			if n == 0 {
				return binaryEnd(br, records, &cutShort)
			}
			if n > 1<<30 {
				return fmt.Errorf("record %d: a length of %d bytes: not a snapshot this build wrote", records+1, n)
			}
			if uint64(cap(raw)) < n {
				raw = make([]byte, n)
			}
			raw = raw[:n]
			if _, err := io.ReadFull(br, raw); err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					cutShort = fmt.Errorf("the snapshot looks cut short: it ends inside object %d", records+1)
					return nil
				}
				return err
			}
			records++
			if !emit(item{raw: raw}) {
				return errStopped
			}
		}
	}
	resume := pauseGC()
	added, err := b.decodeInParallel(split, func() decodeFunc { return newBinaryDecoder().decode })
	resume()
	var decodeErr *decodeError
	switch {
	case errors.As(err, &decodeErr):
		return &InputError{Source: source, Item: decodeErr.item, Err: decodeErr.err}
	case err != nil:
		var inputErr *InputError
		if errors.As(err, &inputErr) {
			return err
		}
		return &InputError{Source: source, Err: err}
	case cutShort != nil:
		return &InputError{Source: source, Err: cutShort}
	case added == 0:
		return &InputError{Source: source, Err: errors.New("empty snapshot")}
	}
	return nil
}

// binaryCountHint reads how many records a binary snapshot file holds from
// its end record, which its last bytes are: 0x00, then the count's
// uvarint, whose bytes but the last have their high bit set. It is only a
// hint to size the builder's tables before reading (0 when the file does
// not end so): loadBinary checks the end record when it reaches it.
func binaryCountHint(f io.ReaderAt, size int64) int {
	var tail [binary.MaxVarintLen64 + 1]byte
	n := int64(len(tail))
	if size < int64(len(BinaryMagic))+1+n {
		return 0
	}
	if _, err := f.ReadAt(tail[:], size-n); err != nil {
		return 0
	}
	i := len(tail) - 1
	if tail[i]&0x80 != 0 {
		return 0
	}
	for i > 0 && tail[i-1]&0x80 != 0 {
		i--
	}
	if i == 0 || tail[i-1] != 0 {
		return 0
	}
	count, k := binary.Uvarint(tail[i:])
	// A record takes at least 4 bytes: its length, two strings' lengths
	// and the encoding.
	if k <= 0 || count > uint64(size/4) {
		return 0
	}
	return int(count)
}

// binaryEnd checks the end record, which says how many records came
// before it, and that nothing follows.
func binaryEnd(br *bufio.Reader, records int, cutShort *error) error {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		*cutShort = errors.New("the snapshot looks cut short: its end record is incomplete")
		return nil
	}
	if n != uint64(records) {
		return fmt.Errorf("the end record counts %d object(s), the file holds %d", n, records)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		return errors.New("bytes after the end record")
	}
	return nil
}

// decode decodes one record of a binary snapshot.
func (d *binaryDecoder) decode(it *item) (func(*builder), error) {
	raw := it.raw
	apiVersion, raw, ok := readString(raw)
	kind, raw, ok2 := readString(raw)
	if !ok || !ok2 || len(raw) == 0 {
		return nil, errors.New("a malformed record")
	}
	encoding := raw[0]
	size, n := binary.Uvarint(raw[1:])
	if n <= 0 || uint64(len(raw)-1-n) != size {
		return nil, errors.New("a malformed record")
	}
	body := raw[1+n:]
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	switch encoding {
	case encodingJSON:
		return decodeObject(gvk, body)
	case encodingProtobuf:
		if gvk == podGVK {
			pod, err := d.decodePod(body)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", kind, err)
			}
			if pod.Name == "" {
				return nil, fmt.Errorf("%s has no metadata.name", kind)
			}
			return keepTyped(pod)
		}
		obj := newTyped(gvk)
		if obj == nil {
			return nil, fmt.Errorf("%s %s has no protobuf encoding in a snapshot", apiVersion, kind)
		}
		if err := obj.(protoUnmarshaler).Unmarshal(body); err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		if obj.GetName() == "" {
			return nil, fmt.Errorf("%s has no metadata.name", kind)
		}
		return keepTyped(obj)
	}
	return nil, fmt.Errorf("%s %s: unknown encoding %d", apiVersion, kind, encoding)
}

// readString reads a uvarint-prefixed string.
func readString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}
