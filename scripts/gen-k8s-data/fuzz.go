package main

// fuzz: random objects of every protobuf kind of the scheme (apimachinery's round-trip fuzzer
// functions over randfill), written in the vector format: client-go's protobuf and the
// canonical JSON of the object decoded from it. Not committed (a few MB); kubefake's ignored
// test `export_for_go_check` reads such a file from KUBEFAKE_PB_VECTORS, checks its decoder and
// encoder against it and writes its own encodings for `go run . check`.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

func fuzz(s *runtime.Scheme, out string, perKind int) {
	codecs := serializer.NewCodecFactory(s)
	pbs := protobuf.NewSerializer(s, s)
	var gvks []schema.GroupVersionKind
	for gvk, t := range s.AllKnownTypes() {
		if gvk.Version != runtime.APIVersionInternal && reflect.PointerTo(t).Implements(protoCodecType) {
			gvks = append(gvks, gvk)
		}
	}
	sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
	var buf bytes.Buffer
	written, skipped := 0, 0
	for i, gvk := range gvks {
		f := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(int64(i)), codecs).NilChance(.3).NumElements(1, 2)
		for n := 0; n < perKind; n++ {
			obj, err := s.New(gvk)
			if err != nil {
				fail("%v", err)
			}
			f.Fill(obj)
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			var pb bytes.Buffer
			err = pbs.Encode(obj, &pb)
			var back runtime.Object
			var actual *schema.GroupVersionKind
			if err == nil {
				back, actual, err = pbs.Decode(pb.Bytes(), nil, nil)
			}
			var js []byte
			if err == nil {
				back.GetObjectKind().SetGroupVersionKind(*actual)
				js, err = json.Marshal(back)
			}
			if err != nil {
				skipped++
				fmt.Fprintf(os.Stderr, "skipped %s: %v\n", gvk, err)
				break
			}
			write(&buf, vector{Name: fmt.Sprintf("%s #%d", gvk, n), JSON: js,
				PB: base64.StdEncoding.EncodeToString(pb.Bytes())})
			written++
		}
	}
	writeFile(out, buf.Bytes())
	fmt.Fprintf(os.Stderr, "%d vectors of %d kinds (%d kinds skipped), %d bytes\n", written, len(gvks), skipped, buf.Len())
}
