package toolargs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type sample struct {
	Name    Text    `json:"name"`
	Session Int     `json:"session"`
	Thresh  Float   `json:"threshold"`
	Reset   Bool    `json:"reset"`
	Tags    Strings `json:"tags"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		in      string
		want    sample
		wantErr string
	}{
		{in: ``, want: sample{}},
		{in: `{"name":"x","session":2,"threshold":0.5,"reset":true,"tags":["a"," b ",""]}`,
			want: sample{Name: "x", Session: Int{2, true}, Thresh: Float{0.5, true}, Reset: Bool{true, true}, Tags: Strings{"a", "b"}}},
		{in: `{"name":7,"session":"3","threshold":"0.25","reset":"no","tags":"a, b,,c"}`,
			want: sample{Name: "7", Session: Int{3, true}, Thresh: Float{0.25, true}, Reset: Bool{false, true}, Tags: Strings{"a", "b", "c"}}},
		{in: `{"session":2.0,"extra":{"ignored":true}}`, want: sample{Session: Int{2, true}}},
		{in: `{"session":null,"tags":null}`, want: sample{}},
		{in: `{"session":"two"}`, wantErr: `demo: argument "session": want a whole number`},
		{in: `{"session":1.5}`, wantErr: `argument "session"`},
		{in: `{"reset":"maybe"}`, wantErr: `argument "reset": want true or false`},
		{in: `{"tags":{"a":1}}`, wantErr: `argument "tags"`},
		{in: `{"name":["x"]}`, wantErr: `argument "name": want text`},
		{in: `["not","an","object"]`, wantErr: "demo: the arguments must be a JSON object"},
	}
	for _, tt := range tests {
		var got sample
		err := Decode("demo", json.RawMessage(tt.in), &got)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Decode(%s) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Decode(%s): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Decode(%s) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
