# semantics.md 2.3: every cell of the state transition table, one mount per
# cell: states shared-with-peers (p*), sole shared (s*), sole shared+slave
# (ss*), shared+slave with peers (sp*), slave (sl*), private (pr*),
# unbindable (u*); changes shared/slave/private/unbindable.
mkdir -p $B/m $B/p1 $B/p2 $B/p3 $B/p4 $B/s1 $B/s2 $B/s3 $B/s4
mkdir -p $B/ss1 $B/ss2 $B/ss3 $B/ss4 $B/sp1 $B/sp2 $B/sp3 $B/sp4 $B/sq
mkdir -p $B/sl1 $B/sl2 $B/sl3 $B/sl4 $B/pr1 $B/pr2 $B/pr3 $B/pr4
mkdir -p $B/u1 $B/u2 $B/u3 $B/u4
mount -t tmpfs M $B/m
mount --make-shared $B/m
mount -t tmpfs P $B/p1
mount --make-shared $B/p1
mount --bind $B/p1 $B/p2
mount --bind $B/p1 $B/p3
mount --bind $B/p1 $B/p4
mount -t tmpfs S1 $B/s1
mount -t tmpfs S2 $B/s2
mount -t tmpfs S3 $B/s3
mount -t tmpfs S4 $B/s4
mount --make-shared $B/s1
mount --make-shared $B/s2
mount --make-shared $B/s3
mount --make-shared $B/s4
mount --bind $B/m $B/ss1
mount --bind $B/m $B/ss2
mount --bind $B/m $B/ss3
mount --bind $B/m $B/ss4
mount --make-slave $B/ss1
mount --make-slave $B/ss2
mount --make-slave $B/ss3
mount --make-slave $B/ss4
mount --make-shared $B/ss1
mount --make-shared $B/ss2
mount --make-shared $B/ss3
mount --make-shared $B/ss4
mount --bind $B/m $B/sp1
mount --make-slave $B/sp1
mount --make-shared $B/sp1
mount --bind $B/sp1 $B/sp2
mount --bind $B/sp1 $B/sp3
mount --bind $B/sp1 $B/sp4
mount --bind $B/sp1 $B/sq
mount --bind $B/m $B/sl1
mount --bind $B/m $B/sl2
mount --bind $B/m $B/sl3
mount --bind $B/m $B/sl4
mount --make-slave $B/sl1
mount --make-slave $B/sl2
mount --make-slave $B/sl3
mount --make-slave $B/sl4
mount -t tmpfs PR1 $B/pr1
mount -t tmpfs PR2 $B/pr2
mount -t tmpfs PR3 $B/pr3
mount -t tmpfs PR4 $B/pr4
mount -t tmpfs U1 $B/u1
mount -t tmpfs U2 $B/u2
mount -t tmpfs U3 $B/u3
mount -t tmpfs U4 $B/u4
mount --make-unbindable $B/u1
mount --make-unbindable $B/u2
mount --make-unbindable $B/u3
mount --make-unbindable $B/u4
# the changes, column by column
mount --make-shared $B/p1
mount --make-slave $B/p2
mount --make-private $B/p3
mount --make-unbindable $B/p4
mount --make-shared $B/s1
mount --make-slave $B/s2
mount --make-private $B/s3
mount --make-unbindable $B/s4
mount --make-shared $B/ss1
mount --make-slave $B/ss2
mount --make-private $B/ss3
mount --make-unbindable $B/ss4
mount --make-shared $B/sp1
mount --make-slave $B/sp2
mount --make-private $B/sp3
mount --make-unbindable $B/sp4
mount --make-shared $B/sl1
mount --make-slave $B/sl2
mount --make-private $B/sl3
mount --make-unbindable $B/sl4
mount --make-shared $B/pr1
mount --make-slave $B/pr2
mount --make-private $B/pr3
mount --make-unbindable $B/pr4
mount --make-shared $B/u1
mount --make-slave $B/u2
mount --make-private $B/u3
mount --make-unbindable $B/u4
