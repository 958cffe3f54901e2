package llamaref

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// chatMessage is struct llama_chat_message: two C strings.
type chatMessage struct {
	role, content uintptr
}

// ChatApply is llama_chat_apply_template: tmpl is a template text (as a
// file's tokenizer.chat_template) or a family name ("chatml", "gemma",
// ...), msgs are role and content pairs. libllama reads the strings only
// during the call.
func (l *Lib) ChatApply(tmpl string, msgs [][2]string, addAssistant bool) (string, error) {
	if l.fn.chatApply == 0 {
		return "", fmt.Errorf("%w: llama_chat_apply_template not found", ErrNotAvailable)
	}
	var keep [][]byte
	cs := func(s string) uintptr {
		b := cStr(s)
		keep = append(keep, b)
		return uintptr(unsafe.Pointer(&b[0]))
	}
	ct := cs(tmpl)
	chat := make([]chatMessage, max(len(msgs), 1))
	for i, m := range msgs {
		chat[i] = chatMessage{cs(m[0]), cs(m[1])}
	}
	n := 1024
	for range 2 {
		buf := make([]byte, n)
		r, _, _ := purego.SyscallN(l.fn.chatApply, ct, uintptr(unsafe.Pointer(&chat[0])), uintptr(len(msgs)),
			boolArg(addAssistant), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		runtime.KeepAlive(keep)
		runtime.KeepAlive(chat)
		got := int(int32(r))
		if got < 0 {
			return "", fmt.Errorf("%w: llama_chat_apply_template refused the template", ErrLlama)
		}
		if got <= len(buf) {
			return string(buf[:got]), nil
		}
		n = got
	}
	return "", fmt.Errorf("%w: llama_chat_apply_template output did not fit", ErrLlama)
}

// ChatTemplate is llama_model_chat_template(model, NULL): the file's
// tokenizer.chat_template, "" when it has none.
func (m *Model) ChatTemplate() string {
	r, _, _ := purego.SyscallN(m.l.fn.modelChatTemplate, m.ptr, 0)
	return goString(r)
}
