package secrets

import (
	"os"

	"github.com/zalando/go-keyring"
)

func osLookupEnv(k string) (string, bool) { return os.LookupEnv(k) }

// SystemKeyring reads the desktop keyring (the Secret Service over D-Bus on
// Linux, the Keychain on macOS, the Credential Manager on Windows) through
// github.com/zalando/go-keyring.
func SystemKeyring(service, user string) (string, error) { return keyring.Get(service, user) }
