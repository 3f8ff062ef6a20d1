//go:build !linux

package sockstat

import "errors"

func room(int) int { return 0 }

func acked(int) (int64, error) { return 0, errors.ErrUnsupported }
