# fault-pick.sh - sourced by fault-diff.sh: what it may kill the broker
# at.  commands_of SCENARIO lists a corpus scenario's commands with their
# kill points, as sharedry traces their plans ($SHAREDRY); legacy SCENARIO
# says whether the legacy setting runs it (no namespace copies).

# The commands of scenario $1 (path), one a line:
#   LINE <tab> KILL-POINTS <tab> KIND <tab> SHAPE
# from sharedry --trace (its "L<n>" ends a command, its "step" lines before
# that are the plan; "(under N)" a mount moved aside, a kill point too;
# "(hidden)" a mount no path reaches).
commands_of() {
	"$SHAREDRY" --trace --base /tmp/w "$1" 2>/dev/null |
	awk -v src="$1" '
	function kind(text,   t, n, i, out) {
		n = split(text, t, /[ \t]+/)
		i = 1
		out = ""
		if (t[1] == "chroot") {
			out = "chroot "
			i = 3
		}
		out = out t[i]
		for (i++; i <= n; i++)
			if (t[i] ~ /^-/) {
				out = out " " t[i]
				if ((t[i] == "-t" || t[i] == "-o") && i < n)
					out = out " " t[++i]
			}
		return out
	}
	BEGIN {
		while ((getline l < src) > 0)
			text[++nl] = l
	}
	/^    step / {
		k = $2
		n++
		if (/\(under [0-9]+\)/) {
			k = k "^"
			n++
		}
		if (/\(hidden\)/)   # left where only a descriptor reaches it
			k = k "~"
		if (k == last) {
			if (sh !~ /\+$/)
				sh = sh "+"
		} else
			sh = sh (sh == "" ? "" : " ") k
		last = k
		next
	}
	/^L[0-9]+ / {
		l = substr($1, 2)
		if ($2 != "OK")        # a refusal: no plan, nothing saved
			sh = "fails"
		if (text[l] ~ /^(chroot [^ ]+ )?(mount|umount|umount2|pivot_root)( |$)/)
			printf "%d\t%d\t%s\t%s\n", l, n, kind(text[l]), sh
		n = 0
		sh = last = ""
	}'
}

# Scenarios the legacy setting runs: no namespace copies.
legacy() {
	! grep -qE '^[[:space:]]*(chroot[[:space:]]+[^[:space:]]+[[:space:]]+)?(unshare|within)([[:space:]]|$)' "$1"
}
