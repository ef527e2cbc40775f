package procacct

import "golang.org/x/sys/unix"

func tidOf() int { return unix.Gettid() }
