# pivot_root (semantics.md 7, S32) from inside a jail whose root is a mount:
# the checks in the kernel's order, then new_root takes the old root's place
# and the old root goes to put_old.  Never propagated.
mkdir -p $B/j $B/p
mount -t tmpfs J $B/j
mkdir -p $B/j/new $B/j/sh $B/j/plain/old
touch $B/j/file
mount -t tmpfs NEW $B/j/new
mkdir -p $B/j/new/old $B/j/new/x/old
# EBUSY: new_root or put_old on the current root mount
chroot $B/j pivot_root / /new
chroot $B/j pivot_root /new /sh
# EBUSY too: /plain and /sh/.. are on the current root mount (checked
# before "not a mount point"); EINVAL: put_old not under new_root
chroot $B/j pivot_root /plain /plain/old
chroot $B/j pivot_root /new /sh/..
mkdir -p $B/j/other
mount -t tmpfs OTHER $B/j/other
chroot $B/j pivot_root /new /other
umount $B/j/other
# ENOTDIR: an argument that is a file
chroot $B/j pivot_root /file /new/old
# EINVAL: put_old's mount is shared
mount -t tmpfs SH $B/j/new/x
mkdir -p $B/j/new/x/old
mount --make-shared $B/j/new/x
chroot $B/j pivot_root /new /new/x/old
umount $B/j/new/x
# EINVAL: the parent of the current root mount is shared
mount --make-shared $B
chroot $B/j pivot_root /new /new/old
mount --make-private $B
# all private: new_root moves to the old root's place, J goes to put_old
chroot $B/j pivot_root /new /new/old
# view: $B/j
