# S6 (s06): (1) sole shared A made private: its slave B becomes private.
# (2) group {C,D} with slave E; make-private C: E stays a slave via D and
# still receives D's later mounts.
mkdir -p $B/a $B/b $B/c $B/d $B/e
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount --make-slave $B/b
mount --make-private $B/a
mount -t tmpfs C $B/c
mount --make-shared $B/c
mount --bind $B/c $B/d
mount --bind $B/c $B/e
mount --make-slave $B/e
mount --make-private $B/c
mkdir -p $B/d/x
mount -t tmpfs DX $B/d/x
