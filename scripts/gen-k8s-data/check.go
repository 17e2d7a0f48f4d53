package main

// check: decodes protobuf that kubefake wrote with client-go and compares the result with the
// JSON kubefake meant. FILE.jsonl has lines in the vector format (vectors.go): {"json", "pb"}
// for objects, {"watch", "json", "frame"} for watch frames. kubefake's test
// `endpoints::protobuf::tests::export_for_go_check` writes such a file.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	restclientwatch "k8s.io/client-go/rest/watch"
)

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// decodeObject: client-go's protobuf decoder, then encoding/json with the kind set.
func decodeObject(s *runtime.Scheme, pb []byte) ([]byte, error) {
	obj, gvk, err := protobuf.NewSerializer(s, s).Decode(pb, nil, nil)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	return json.Marshal(obj)
}

// decodeWatch: client-go's watch decoding as the REST client sets it up for protobuf: the
// length-delimited framer, the raw serializer for WatchEvent and the protobuf serializer for
// the embedded object.
func decodeWatch(s *runtime.Scheme, frame []byte) (string, []byte, error) {
	frames := protobuf.LengthDelimitedFramer.NewFrameReader(io.NopCloser(bytes.NewReader(frame)))
	events := streaming.NewDecoder(frames, protobuf.NewRawSerializer(s, s))
	dec := restclientwatch.NewDecoder(events, protobuf.NewSerializer(s, s))
	typ, obj, err := dec.Decode()
	if err != nil {
		return "", nil, err
	}
	gvks, _, err := s.ObjectKinds(obj)
	if err != nil {
		return "", nil, err
	}
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
	js, err := json.Marshal(obj)
	return string(typ), js, err
}

func check(s *runtime.Scheme, path string) {
	f, err := os.Open(path)
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<24), 1<<24)
	bad, n := 0, 0
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			fail("%s: %v", path, err)
		}
		n++
		var got []byte
		var typ string
		if v.Watch != "" {
			frame, _ := base64.StdEncoding.DecodeString(v.Frame)
			typ, got, err = decodeWatch(s, frame)
		} else {
			pb, _ := base64.StdEncoding.DecodeString(v.PB)
			got, err = decodeObject(s, pb)
		}
		switch {
		case err != nil:
			fmt.Printf("FAIL %s: %v\n", v.Name, err)
			bad++
		case typ != v.Watch || !sameJSON(got, v.JSON):
			fmt.Printf("FAIL %s:\n  want %s %s\n  got  %s %s\n", v.Name, v.Watch, v.JSON, typ, got)
			bad++
		default:
			fmt.Printf("ok   %s\n", v.Name)
		}
	}
	if err := sc.Err(); err != nil {
		fail("%v", err)
	}
	fmt.Printf("%d checked, %d failed\n", n, bad)
	if bad > 0 {
		os.Exit(1)
	}
}
