# MNT_EXPIRE (issue 29): the first umount2(MNT_EXPIRE) of an unused mount
# marks it (EAGAIN); a second one with no use in between unmounts it.  A
# use by another process in between (a stat, an open, a chdir) drops a
# reference, which clears the mark: EAGAIN again, and a new mark.
mkdir -p $B/a $B/b $B/c
mount -t tmpfs A $B/a
umount2 -e $B/a
umount2 -e $B/a
mount -t tmpfs B $B/b
umount2 -e $B/b
use stat $B/b
umount2 -e $B/b
umount2 -e $B/b
mount -t tmpfs C $B/c
touch $B/c/f
umount2 -e $B/c
use open $B/c/f
umount2 -e $B/c
use chdir $B/c
umount2 -e $B/c
umount2 -e $B/c
umount2 -e $B/c
