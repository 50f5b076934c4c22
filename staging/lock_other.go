//go:build !unix

package staging

import (
	"errors"
	"os"
)

func tryLock(*os.File) (bool, error) {
	return false, errors.New("file locking is only implemented on Unix systems")
}
