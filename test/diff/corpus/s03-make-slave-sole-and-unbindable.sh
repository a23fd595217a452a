# S3 (s03): make-slave of a sole shared mount gives private;
# make-slave of an unbindable mount is a no-op (stays unbindable).
mkdir -p $B/a $B/p
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --make-slave $B/a
mount -t tmpfs P $B/p
mount --make-unbindable $B/p
mount --make-slave $B/p
