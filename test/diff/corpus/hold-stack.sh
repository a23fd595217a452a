# semantics.md 5.3: a holder inside a covered mount (hold before the
# overmount) keeps it busy: umount of the top works, the bottom then is
# EBUSY until release.
mkdir -p $B/a
mount -t tmpfs BOTTOM $B/a
hold $B/a
mount -t tmpfs TOP $B/a
umount $B/a
umount $B/a
release $B/a
umount $B/a
