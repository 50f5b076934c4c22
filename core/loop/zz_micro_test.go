package loop

import (
	"testing"

	"google.golang.org/protobuf/proto"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

func BenchmarkZZMicro(b *testing.B) {
	h := benchHost(b, 1)
	a := benchAgent(b, h, 1)
	t := &turn{requestID: "bench", iteration: 1}
	ext := h.Extensions(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END)[0]
	call, _ := a.hookCall(t, ext)
	req := &exocortexv1.MessageLoopEndRequest{Call: call, Iteration: 1}
	raw, _ := proto.Marshal(req)
	println("request bytes", len(raw))
	b.Run("hookCall", func(b *testing.B) {
		for b.Loop() {
			a.hookCall(t, ext)
		}
	})
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			proto.Marshal(req)
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		for b.Loop() {
			var r exocortexv1.MessageLoopEndRequest
			proto.Unmarshal(raw, &r)
		}
	})
	b.Run("clone", func(b *testing.B) {
		for b.Loop() {
			proto.Clone(req)
		}
	})
	det := proto.MarshalOptions{Deterministic: true}
	var buf1, buf2 []byte
	b.Run("detmarshal2", func(b *testing.B) {
		for b.Loop() {
			buf1, _ = det.MarshalAppend(buf1[:0], req)
			buf2, _ = det.MarshalAppend(buf2[:0], req)
			_ = string(buf1) == string(buf2)
		}
	})
	b.Run("clone+equal", func(b *testing.B) {
		for b.Loop() {
			x := proto.Clone(req)
			proto.Equal(x, req)
		}
	})
	c := proto.Clone(req)
	b.Run("equal", func(b *testing.B) {
		for b.Loop() {
			proto.Equal(c, req)
		}
	})
}
