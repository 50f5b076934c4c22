package hnsw

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unsafe"
)

// Keys of the slots of a core. Slots below kbase were imported from a flat
// file of version 3 and their keys are read from its key section where the
// file lies (ksect, with koffs locating each string key); the others are in
// keys[id-kbase]. A key read from the section is copied on the way out
// (key): the section may be a mapping that is unmapped once the graph is
// unreachable, and a key handed to a caller (a search hit kept in a map)
// may outlive the graph, which nothing would keep the mapping alive for.
// Comparisons and hashes read the section in place.

// keyWord is the 8-byte word the file formats store for a key of a numeric
// kind (a float as its float64 bits, an integer sign- or zero-extended).
func keyWord[K any](kind reflect.Kind, k *K) uint64 {
	p := unsafe.Pointer(k)
	switch kind {
	case reflect.Int:
		return uint64(*(*int)(p))
	case reflect.Int8:
		return uint64(*(*int8)(p))
	case reflect.Int16:
		return uint64(*(*int16)(p))
	case reflect.Int32:
		return uint64(*(*int32)(p))
	case reflect.Int64:
		return uint64(*(*int64)(p))
	case reflect.Uint:
		return uint64(*(*uint)(p))
	case reflect.Uint8:
		return uint64(*(*uint8)(p))
	case reflect.Uint16:
		return uint64(*(*uint16)(p))
	case reflect.Uint32:
		return uint64(*(*uint32)(p))
	case reflect.Uint64:
		return *(*uint64)(p)
	case reflect.Uintptr:
		return uint64(*(*uintptr)(p))
	case reflect.Float32:
		return math.Float64bits(float64(*(*float32)(p)))
	case reflect.Float64:
		return math.Float64bits(*(*float64)(p))
	}
	return 0
}

// mappedKey returns the encoded bytes of slot id's key in the key section:
// a string's bytes, or the 8-byte word. A damaged section taken on trust
// panics here (a search recovers it) rather than reading out of bounds.
func (c *core[K]) mappedKey(id uint32) []byte {
	if c.kk != reflect.String {
		o := 8 * uint64(id)
		return c.ksect[o : o+8]
	}
	o := binary.LittleEndian.Uint64(c.koffs[8*uint64(id):])
	if o >= uint64(len(c.ksect)) {
		panic(fmt.Sprintf("hnsw: %v: key of slot %d at byte %d of %d", ErrCorrupt, id, o, len(c.ksect)))
	}
	l, k := binary.Uvarint(c.ksect[o:])
	if k <= 0 || l > uint64(len(c.ksect))-o-uint64(k) {
		panic(fmt.Sprintf("hnsw: %v: bad key of slot %d", ErrCorrupt, id))
	}
	o += uint64(k)
	return c.ksect[o : o+l : o+l]
}

// key returns slot id's key (a copy when it is read from the key section).
func (c *core[K]) key(id uint32) K {
	if int(id) >= c.kbase {
		return c.keys[int(id)-c.kbase]
	}
	var k K
	b := c.mappedKey(id)
	if c.kk == reflect.String {
		*(*string)(unsafe.Pointer(&k)) = string(b)
		return k
	}
	if err := setKey(&k, c.kk, binary.LittleEndian.Uint64(b)); err != nil {
		panic(fmt.Sprintf("hnsw: slot %d: %v", id, err))
	}
	return k
}

// appendKeyBytes appends slot id's key as the file formats encode it: a
// string as its length (uvarint) and bytes, any other kind as its keyWord.
func (c *core[K]) appendKeyBytes(buf []byte, id uint32) []byte {
	if int(id) >= c.kbase {
		k := c.keys[int(id)-c.kbase]
		if c.kk == reflect.String {
			s := *(*string)(unsafe.Pointer(&k))
			buf = binary.AppendUvarint(buf, uint64(len(s)))
			return append(buf, s...)
		}
		return binary.LittleEndian.AppendUint64(buf, keyWord(c.kk, &k))
	}
	b := c.mappedKey(id)
	if c.kk == reflect.String {
		buf = binary.AppendUvarint(buf, uint64(len(b)))
	}
	return append(buf, b...)
}

func (c *core[K]) keyIs(id uint32, k K) bool {
	if int(id) >= c.kbase {
		if int(id)-c.kbase >= len(c.keys) {
			panic(fmt.Sprintf("hnsw: %v: the key table names slot %d of %d", ErrCorrupt, id, c.n))
		}
		return c.keys[int(id)-c.kbase] == k
	}
	b := c.mappedKey(id)
	if c.kk == reflect.String {
		return string(b) == *(*string)(unsafe.Pointer(&k))
	}
	return binary.LittleEndian.Uint64(b) == keyWord(c.kk, &k)
}

func (c *core[K]) keyHash(seed uint64, k K) uint64 {
	if c.kk == reflect.String {
		return hashString(seed, *(*string)(unsafe.Pointer(&k)))
	}
	return hashWord(seed, keyWord(c.kk, &k))
}

func (c *core[K]) slotHash(seed uint64, id uint32) uint64 {
	if int(id) >= c.kbase {
		return c.keyHash(seed, c.keys[int(id)-c.kbase])
	}
	b := c.mappedKey(id)
	if c.kk == reflect.String {
		return hashBytes(seed, b)
	}
	return hashWord(seed, binary.LittleEndian.Uint64(b))
}
