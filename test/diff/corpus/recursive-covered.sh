# semantics.md 2.4: recursive changes include overmounts and everything
# below them; a non-recursive change only hits the top of a stack.
mkdir -p $B/t
mount -t tmpfs T $B/t
mkdir -p $B/t/a
mount -t tmpfs TA $B/t/a
mount -t tmpfs TA2 $B/t/a
mkdir -p $B/t/a/b
mount -t tmpfs TB $B/t/a/b
mount -t tmpfs T2 $B/t
mount --make-rshared $B/t
mkdir -p $B/u
mount -t tmpfs U $B/u
mkdir -p $B/u/v
mount -t tmpfs V $B/u/v
mount --make-rshared $B/u
mount --make-rslave $B/u
mount --make-private $B/t
