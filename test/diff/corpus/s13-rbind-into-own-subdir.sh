# S13 (s12, quiz B): rshared tree rbound into its own subdirectory: one copy
# of each mount, no recursion; a second rbind compounds (12 mounts).
mount -t tmpfs R $B/
mkdir -p $B/r
mount -t tmpfs ROOT $B/r
mkdir -p $B/r/usr $B/r/v/1 $B/r/v/2
mount -t tmpfs USR $B/r/usr
mount --make-rshared $B/r
mount --rbind $B/r $B/r/v/1
mount --rbind $B/r $B/r/v/2
