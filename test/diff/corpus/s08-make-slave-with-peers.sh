# S8 (s43): make-slave of a shared+slave M that has a peer N makes M a slave
# of its former group (not of its old master); make-private of a sole
# unmastered A leaves its shared+slave S plain shared.
mkdir -p $B/z $B/m $B/n $B/a $B/s
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount --bind $B/z $B/m
mount --make-slave $B/m
mount --make-shared $B/m
mount --bind $B/m $B/n
mount --make-slave $B/m
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/s
mount --make-slave $B/s
mount --make-shared $B/s
mount --make-private $B/a
