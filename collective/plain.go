package collective

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"
)

var plainTypes sync.Map // reflect.Type -> error (nil when plain)

// checkPlain reports an error when T holds pointers, which cannot travel as
// bytes between processes.
func checkPlain[T any]() error {
	t := reflect.TypeFor[T]()
	if v, ok := plainTypes.Load(t); ok {
		if v == nil {
			return nil
		}
		return v.(error)
	}
	var err error
	if !isPlain(t) {
		err = fmt.Errorf("collective: element type %v holds pointers and cannot be sent", t)
	}
	plainTypes.Store(t, err)
	return err
}

func isPlain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return isPlain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !isPlain(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// asBytes views the memory of s as bytes, without copying.
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

func sizeOf[T any]() int {
	var zero T
	return int(unsafe.Sizeof(zero))
}
