# S30 (s26, without the sysfs part): a new mount under a pure slave is
# private; under a shared+slave it is shared with a new group.
mkdir -p $B/z $B/s $B/ss
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount --bind $B/z $B/s
mount --make-slave $B/s
mount --bind $B/z $B/ss
mount --make-slave $B/ss
mount --make-shared $B/ss
mkdir -p $B/z/a $B/z/b
mount -t tmpfs ON_SLAVE $B/s/a
mount -t tmpfs ON_SHSLAVE $B/ss/b
