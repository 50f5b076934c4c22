package host

// FixtureBin is the misbehaving test plugin TestMain builds, for the tests of
// package host_test (which may import core/loop).
func FixtureBin() string { return fixtureBin }
