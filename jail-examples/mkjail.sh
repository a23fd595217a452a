#!/bin/bash
# mkjail.sh: a minimal working chroot jail for libshare.
#
#   mkjail.sh [--no-shim] JAILDIR [SHIM]
#   mkjail.sh --arch ARCH [--cache DIR] JAILDIR SHIM
#   mkjail.sh --remove JAILDIR
#
# Builds, as root, a jail in which the system's own programs run:
#
#   JAILDIR/usr           the system's /usr, bound read-only
#   JAILDIR/bin, lib, ... the merged-usr symlinks (bin -> usr/bin, ...) as the
#                         host has them; a top directory that is not a
#                         symlink on the host is bound read-only like /usr
#   JAILDIR/etc           passwd, group, ld.so.cache, and ld.so.preload
#   JAILDIR/dev/null      a device node (a bind of the host's if mknod fails)
#   JAILDIR/tmp, run      empty; util-linux keeps /run/mount/utab there
#   JAILDIR/proc          an empty directory (nothing is mounted on it)
#   JAILDIR/libshare/libshare.so
#                         a copy of the shim, named by /etc/ld.so.preload,
#                         so that every dynamically linked program of the
#                         jail loads it, the setuid mount and umount too
#                         (the loader honours ld.so.preload for them, where
#                         it ignores LD_PRELOAD)
#
# SHIM defaults to $LIBSHARE_SO, else the shim built beside this script
# (../shim/libshare.so), else an installed libshare.so.  --no-shim builds
# the same jail without the shim and without ld.so.preload: there the
# kernel answers the jail's mount calls itself (the tests compare the two).
#
# The mounts (/usr and its likes) are made with the mount(8) found in PATH,
# in the caller's environment.  Run mkjail.sh BEFORE starting sharebrokerd,
# which imports the host's mount table when it starts; with a broker already
# running, run it with LD_PRELOAD=libshare.so (and LIBSHARE_SOCKET) so that
# the broker makes these mounts itself and its graph stays true.  The same
# holds for --remove, which unmounts only what mkjail.sh mounted and leaves
# the files in place.
#
# --arch ARCH (a Debian architecture: arm64, armhf, i386, ...) builds a
# jail of another architecture instead: a small Debian system of its own
# (bookworm's util-linux, mount, coreutils and dash with the libraries
# they need, unpacked by mmdebstrap --variant=extract, so that no
# maintainer script runs under emulation; /bin/sh is dash, as dash's
# would make it), whose programs run through qemu-user-static
# (binfmt_misc) where the kernel cannot run them.  SHIM is
# then the shim built for ARCH (configure --host=TRIPLET --disable-broker;
# README.md, "Where it runs"), checked against ARCH, and installed at the
# jail's multiarch path, /usr/lib/TRIPLET/libshare/libshare.so, which
# /etc/ld.so.preload names.  The system is downloaded once into
# DIR/debian-bookworm-ARCH.tar (--cache; default: the current directory)
# and unpacked from there; a jail already unpacked only gets the shim
# again.  Nothing is mounted.  LIBSHARE_MIRROR overrides the mirror.
#
# Running it again on a built jail refreshes the files and the shim and
# mounts only what is missing.  Exit status: 0 done, 1 failure, 2 usage.
set -eu

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)

# usage [STATUS]: to stdout for --help (0), to stderr for a mistake (2).
usage() {
	local status=${1:-2}
	{
		echo "usage: $prog [--no-shim] JAILDIR [SHIM]"
		echo "       $prog --arch ARCH [--cache DIR] JAILDIR SHIM"
		echo "       $prog --remove JAILDIR"
		if [[ $status -eq 0 ]]; then
			echo "Builds a chroot jail whose programs load libshare (mkjail(8))."
			echo
			echo "  --no-shim      the same jail without the shim"
			echo "  --arch ARCH    a Debian system of ARCH (mmdebstrap, qemu-user)"
			echo "                 with SHIM, the shim built for ARCH"
			echo "  --cache DIR    where --arch keeps the downloaded system"
			echo "  --remove       unmount what $prog mounted in JAILDIR"
			echo "  -h, --help     this help"
			echo "  -V, --version  the version"
			echo "SHIM defaults to \$LIBSHARE_SO, else the built or installed one."
		fi
	} >&$((status ? 2 : 1))
	exit "$status"
}

die() {
	echo "$prog: $*" >&2
	exit 1
}

# The top directories a program's paths may start with: symlinks into usr/
# on a merged-usr system (Debian 12), real directories on older ones.
TOPS="bin sbin lib lib32 lib64 libx32"

is_mountpoint() {
	mountpoint -q -- "$1" 2>/dev/null
}

# A read-only bind of a host directory; a second run leaves it as it is.
bind_ro() {
	local src=$1 dst=$2
	mkdir -p -- "$dst"
	is_mountpoint "$dst" && return 0
	mount --bind -- "$src" "$dst" || die "cannot bind $src on $dst"
	mount -o remount,bind,ro -- "$dst" ||
		die "cannot make $dst read-only"
}

find_shim() {
	local c LS_ROOT='' LS_PKGLIBDIR=''
	# shellcheck source=/dev/null
	. "$here/paths.sh" 2>/dev/null || true   # where make install put it
	for c in "${LIBSHARE_SO:-}" "$here/../shim/libshare.so" \
		"${LS_PKGLIBDIR:+$LS_ROOT$LS_PKGLIBDIR/libshare.so}"; do
		if [[ -n $c && -f $c ]]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

make_etc() {
	local j=$1
	mkdir -p -- "$j/etc"
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
		'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' \
		>"$j/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$j/etc/group"
	# The loader finds the system's libraries without it, only slower.
	if [[ -f /etc/ld.so.cache ]]; then
		cp -- /etc/ld.so.cache "$j/etc/ld.so.cache"
	fi
}

make_dev() {
	local j=$1
	mkdir -p -- "$j/dev"
	[[ -c $j/dev/null ]] && return 0
	is_mountpoint "$j/dev/null" && return 0
	rm -f -- "$j/dev/null"
	if ! mknod -m 666 -- "$j/dev/null" c 1 3 2>/dev/null; then
		# a nodev filesystem: borrow the host's node instead
		: >"$j/dev/null"
		mount --bind /dev/null "$j/dev/null" ||
			die "cannot make $j/dev/null"
	fi
}

make_tops() {
	local j=$1 t target
	for t in $TOPS; do
		if [[ -L /$t ]]; then
			target=$(readlink "/$t")
			if [[ -L $j/$t || ! -e $j/$t ]]; then
				ln -sfn -- "$target" "$j/$t"
			fi
		elif [[ -d /$t ]]; then
			bind_ro "/$t" "$j/$t"
		fi
	done
}

install_shim() {
	local j=$1 shim=$2
	mkdir -p -- "$j/libshare"
	# a fresh file each time: a running program may map the old one
	cp -- "$shim" "$j/libshare/libshare.so.new"
	chmod 755 "$j/libshare/libshare.so.new"
	mv -f -- "$j/libshare/libshare.so.new" "$j/libshare/libshare.so"
	echo /libshare/libshare.so >"$j/etc/ld.so.preload"
}

remove_shim() {
	local j=$1
	rm -f -- "$j/etc/ld.so.preload" "$j/libshare/libshare.so"
	rmdir -- "$j/libshare" 2>/dev/null || true
}

build() {
	local j=$1 shim=$2
	mkdir -p -- "$j"
	bind_ro /usr "$j/usr"
	make_tops "$j"
	make_etc "$j"
	make_dev "$j"
	mkdir -p -- "$j/tmp" "$j/run" "$j/proc"
	chmod 1777 "$j/tmp"
	if [[ -n $shim ]]; then
		install_shim "$j" "$shim"
	else
		remove_shim "$j"
	fi
}

# Debian's multiarch name of an architecture (dpkg-architecture's
# DEB_HOST_MULTIARCH, without dpkg-dev).
arch_triplet() {
	case $1 in
	amd64) echo x86_64-linux-gnu ;;
	arm64) echo aarch64-linux-gnu ;;
	armhf) echo arm-linux-gnueabihf ;;
	i386) echo i386-linux-gnu ;;
	*) return 1 ;;
	esac
}

# readelf's machine of a Debian architecture's programs.
arch_machine() {
	case $1 in
	amd64) echo "X86-64" ;;
	arm64) echo "AArch64" ;;
	armhf) echo "ARM" ;;
	i386) echo "Intel 80386" ;;
	esac
}

# What a jail of another architecture holds: util-linux's mount tools,
# coreutils and a shell (dash: login-ns.sh and scripts run in the jail).
FOREIGN_PACKAGES=mount,util-linux,coreutils,dash

# A jail of another architecture: a Debian system of ARCH unpacked from
# the cached tarball (made first if missing), and the shim for ARCH.
build_foreign() {
	local j=$1 shim=$2 arch=$3 cache=$4 tar triplet machine
	command -v mmdebstrap >/dev/null ||
		die "--arch needs mmdebstrap (apt-get install mmdebstrap qemu-user-static binfmt-support)"
	triplet=$(arch_triplet "$arch") ||
		die "$arch: not an architecture mkjail knows (arm64, armhf, i386, amd64)"
	machine=$(arch_machine "$arch")
	if ! readelf -h "$shim" 2>/dev/null | grep -q "Machine:.* $machine"; then
		die "$shim is not a shim for $arch ($machine): build it with" \
			"./configure --host=${triplet/i386/i686} --disable-broker"
	fi
	tar=$cache/debian-bookworm-$arch.tar
	# a cache made with another list of packages is made again
	if [[ ! -f $tar ||
	      $(cat -- "$tar.packages" 2>/dev/null) != "$FOREIGN_PACKAGES" ]]
	then
		mkdir -p -- "$cache"
		mmdebstrap --arch="$arch" --variant=extract --format=tar \
			--include="$FOREIGN_PACKAGES" bookworm "$tar.new" \
			"${LIBSHARE_MIRROR:-http://deb.debian.org/debian}" ||
			die "mmdebstrap failed for $arch"
		mv -f -- "$tar.new" "$tar"
		echo "$FOREIGN_PACKAGES" >"$tar.packages"
	fi
	mkdir -p -- "$j"
	if [[ ! -e $j/etc/libshare-arch ]]; then
		tar -C "$j" -xpf "$tar" || die "cannot unpack $tar"
		[[ -e $j/bin/sh ]] || ln -s dash "$j/bin/sh"
		echo "$arch" >"$j/etc/libshare-arch"
	fi
	[[ $(cat "$j/etc/libshare-arch") == "$arch" ]] ||
		die "$j: a jail of $(cat "$j/etc/libshare-arch"), not $arch"
	chroot "$j" /bin/true 2>/dev/null ||
		die "$j: its $arch programs do not run here: apt-get install" \
			"qemu-user-static binfmt-support, and update-binfmts --enable" \
			"qemu-$(arch_qemu "$arch")"
	mkdir -p -- "$j/usr/lib/$triplet/libshare"
	cp -- "$shim" "$j/usr/lib/$triplet/libshare/libshare.so.new"
	chmod 755 "$j/usr/lib/$triplet/libshare/libshare.so.new"
	mv -f -- "$j/usr/lib/$triplet/libshare/libshare.so.new" \
		"$j/usr/lib/$triplet/libshare/libshare.so"
	echo "/usr/lib/$triplet/libshare/libshare.so" >"$j/etc/ld.so.preload"
}

# qemu-user's name of a Debian architecture.
arch_qemu() {
	case $1 in
	arm64) echo aarch64 ;;
	armhf) echo arm ;;
	amd64) echo x86_64 ;;
	*) echo "$1" ;;
	esac
}

# Unmounts what build() mounted, deepest first; files stay.
remove() {
	local j=$1 m failed=0
	[[ -d $j ]] || die "$j: no such directory"
	for m in "$j/dev/null" $(for t in $TOPS; do echo "$j/$t"; done) \
		"$j/usr"; do
		[[ -L $m ]] && continue
		is_mountpoint "$m" || continue
		umount -- "$m" || failed=1
	done
	[[ $failed -eq 0 ]] || die "$j: some mounts are still in place"
}

main() {
	local mode=build shim=none arch='' cache=.
	case ${1:-} in
	--remove) mode=remove; shift ;;
	--arch)
		[[ $# -ge 2 ]] || usage
		arch=$2
		shift 2
		if [[ ${1:-} == --cache ]]; then
			[[ $# -ge 2 ]] || usage
			cache=$2
			shift 2
		fi
		[[ $# -eq 2 && -n $1 && -f $2 ]] || usage
		[[ $(id -u) -eq 0 ]] || die "must be run as root"
		local fj
		fj=$(realpath -m -- "$1")
		[[ $fj != / ]] || die "refusing to build a jail on /"
		build_foreign "$fj" "$(realpath -- "$2")" "$arch" \
			"$(realpath -m -- "$cache")"
		return ;;
	--no-shim) shim=; shift ;;
	--help|-h) usage 0 ;;
	--version|-V)
		# shellcheck source=/dev/null
		. "$here/paths.sh" 2>/dev/null || true
		echo "$prog (libshare) ${LS_VERSION:-0.1}"
		exit 0 ;;
	-*) usage ;;
	esac
	[[ $# -ge 1 && -n $1 ]] || usage
	[[ $(id -u) -eq 0 ]] || die "must be run as root"
	local j
	j=$(realpath -m -- "$1")
	[[ $j != / ]] || die "refusing to build a jail on /"
	if [[ $mode == remove ]]; then
		[[ $# -eq 1 ]] || usage
		remove "$j"
		return
	fi
	[[ $# -le 2 ]] || usage
	if [[ $shim == none ]]; then
		if [[ $# -eq 2 ]]; then
			shim=$2
			[[ -f $shim ]] || die "$shim: no such file"
		else
			shim=$(find_shim) || die "no libshare.so found: build" \
				"it (make), or name it: $prog JAILDIR SHIM"
		fi
		shim=$(realpath -- "$shim")
	elif [[ $# -eq 2 ]]; then
		usage
	fi
	build "$j" "$shim"
}

main "$@"
