package sleep

import "testing"

func TestDupRules(t *testing.T) {
	lx := newLexicon()
	cases := []struct {
		a, b string
		dup  bool
	}{
		{"Chiara Brandt prefers Vim for editing because it is fast.", "Chiara Brandt prefers Vim for editing because it is fast.", true},
		{"Chiara Brandt prefers Vim for editing because it is fast.", "For editing, Chiara Brandt prefers Vim because it is fast.", true},
		{"Chiara Brandt prefers Vim for editing because it is fast.", "Chiara Brandt likes Vim for editing because it is quick.", true},
		{"Chiara Brandt prefers Vim for editing because it is fast.", "Chiara Brandt prefers Vim for editting because it is fast", true},
		{"Chiara Brandt prefers Vim for editing because it is fast.", "Chiara Brandt prefers Emacs for editing because it is fast.", false},
		{"Chiara Brandt prefers Vim for editing because it is fast.", "Bruno Brandt prefers Vim for editing because it is fast.", false},
		{"Chiara Brandt prefers Vim for editing because it is fast.", "Chiara Brandt does not prefer Vim for editing because it is fast.", false},
		{"The billing service listens on port 8080 in production.", "The billing service listens on port 9090 in production.", false},
		{"The billing service listens on port 8080 in production.", "In production the billing service listens on port 8080.", true},
		{"The billing service listens on port 8080 in production.", "The ledger service listens on port 8080 in production.", false},
		{"The billing service listens on port 8080 in production.", "The billing service listens on port 8080 in staging.", false},
		{"The user prefers a dark terminal theme.", "The user prefers a light terminal theme.", false},
		{"Backups run every Monday at 3:00.", "Backups run every Tuesday at 3:00.", false},
		{"Redis holds the session cache.", "The session cache lives in Redis.", false},
	}
	for _, c := range cases {
		m := lx.dup(lx.analyse(c.a), lx.analyse(c.b))
		if m.ok != c.dup {
			t.Errorf("dup(%q, %q) = %v (%s, overlap %.2f), want %v", c.a, c.b, m.ok, m.why, m.overlap, c.dup)
		}
	}
}
