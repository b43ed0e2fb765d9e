#!/usr/bin/env bash
# Build a tiny QEMU guest (Debian kernel + busybox initramfs) with a working
# soft-RoCE (rdma_rxe) device and netem, for interop tests.
#
#   tests/interop/build_vm.sh OUTDIR
#
# Output: OUTDIR/vmlinuz (Debian's bzImage), OUTDIR/vmlinux (the same kernel
# uncompressed, PVH-bootable, used by vm.py when present: boots much faster
# under TCG), OUTDIR/initrd.img (uncompressed newc cpio), OUTDIR/kernel-version
# (plus OUTDIR/stamp and OUTDIR/cache/ with the downloaded kernel .deb).
#
# Idempotent and cached: when OUTDIR holds an image built for the same kernel
# version and the same inputs hash (this script, guest/*, host package
# versions of the copied tools) it returns at once.  See docs/interop-vm.md.
set -euo pipefail

die() { echo "build_vm: ERROR: $*" >&2; exit 1; }
log() { echo "build_vm: $*" >&2; }

[ $# -eq 1 ] || die "usage: $0 OUTDIR"
OUTDIR=$(mkdir -p "$1" && cd "$1" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GUEST="$HERE/guest"
export LC_ALL=C

# --- what goes into the image ----------------------------------------------
# Top-level modules loaded at boot (in dependency order, deps resolved from
# modules.dep).  Missing ones are an error unless built into the kernel.
# The connection manager stack (ib_cm, iw_cm, rdma_cm and rdma_ucm, which makes
# /dev/infiniband/rdma_cm) is loaded at boot too: librdmacm needs it.
BOOT_MODULES="virtio_pci virtio_net virtio_console crc32_generic rdma_rxe ib_uverbs sch_netem \
  ib_cm iw_cm rdma_cm rdma_ucm"
# Optional modules copied into the image, loaded on demand (modprobe, or the
# kernel's auto-loading through busybox modprobe, or rw.mods= on the cmdline).
EXTRA_MODULES="crc32_pclmul crc32c_generic ifb act_mirred act_gact sch_ingress cls_u32 cls_matchall \
  sch_tbf sch_htb sch_prio sch_red sch_fq_codel veth bridge 8021q"
# Programs (host paths are looked up with command -v, copied with their libs).
REQUIRED_PROGS="ip tc rdma ping ibv_devinfo ibv_devices ibv_rc_pingpong \
  ib_write_bw ib_send_bw ib_read_bw ib_atomic_bw ib_write_lat ib_send_lat ib_read_lat ib_atomic_lat \
  rping udaddy ucmatose rdma_server rdma_client cmtime qperf"
OPTIONAL_PROGS="ss bridge ethtool tcpdump iperf3 ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong \
  ibv_xsrq_pingpong ibv_asyncwatch mckey riostream rdma_xserver rdma_xclient"
# Debian's busybox prefers its own applets when one applet execs another
# program by name (timeout sh -> busybox sh, which then runs busybox tc...):
# use the real tools for the applets that exec programs.
OVERRIDE_PROGS="timeout setsid xargs env nohup nice taskset chroot flock"
HOST_PKGS="busybox-static iproute2 rdma-core ibverbs-utils ibverbs-providers libibverbs1 perftest \
  rdmacm-utils librdmacm1 qperf \
  iputils-ping ethtool tcpdump iperf3 libc6 libgcc-s1 dash bash coreutils util-linux findutils"

# --- inputs hash --------------------------------------------------------------
input_hash() {
  {
    cat "${BASH_SOURCE[0]}"
    for f in "$GUEST"/*; do echo "== $(basename "$f")"; cat "$f"; done
    dpkg-query -W -f='${Package} ${Version}\n' $HOST_PKGS 2>/dev/null || true
  } | sha256sum | cut -d' ' -f1
}
HASH=$(input_hash)

# --- kernel version from linux-image-amd64's dependency ---------------------
kernel_pkg() {
  apt-cache depends linux-image-amd64 2>/dev/null \
    | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1
}

exec 9>"$OUTDIR/.lock"
flock 9

KPKG=$(kernel_pkg || true)
if [ -z "$KPKG" ]; then
  log "apt-cache does not know linux-image-amd64: running apt-get update"
  if ! apt-get update -qq >&2; then
    log "apt-get update failed"
  fi
  KPKG=$(kernel_pkg || true)
fi
if [ -z "$KPKG" ]; then
  # Offline fallback: reuse an existing image built from the same inputs.
  if [ -f "$OUTDIR/stamp" ] && grep -qx "hash=$HASH" "$OUTDIR/stamp"; then
    log "WARNING: cannot resolve linux-image-amd64; reusing cached image $(cat "$OUTDIR/kernel-version")"
    exit 0
  fi
  die "cannot resolve the kernel package that linux-image-amd64 depends on (apt-cache depends linux-image-amd64)"
fi
KVER=${KPKG#linux-image-}

STAMP="kver=$KVER
hash=$HASH"
if [ -f "$OUTDIR/stamp" ] && [ "$(cat "$OUTDIR/stamp")" = "$STAMP" ] \
   && [ -s "$OUTDIR/vmlinuz" ] && [ -s "$OUTDIR/initrd.img" ]; then
  log "up to date: $OUTDIR (kernel $KVER)"
  exit 0
fi

T0=$(date +%s.%N)
log "building image for kernel $KVER into $OUTDIR"

# --- fetch the kernel .deb -----------------------------------------------------
CACHE="$OUTDIR/cache"
mkdir -p "$CACHE"
DEB=$(ls "$CACHE/${KPKG}_"*_amd64.deb 2>/dev/null | head -n1 || true)
if [ -z "$DEB" ]; then
  log "apt-get download $KPKG"
  ( cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "$KPKG" >&2 ) || {
    log "apt-get download failed; running apt-get update and retrying"
    apt-get update -qq >&2 || true
    ( cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "$KPKG" >&2 )
  } || die "apt-get download $KPKG failed"
  DEB=$(ls "$CACHE/${KPKG}_"*_amd64.deb | head -n1)
  # keep only the current kernel's .deb
  for d in "$CACHE"/linux-image-*.deb; do [ "$d" = "$DEB" ] || rm -f "$d"; done
fi

WORK="$OUTDIR/work"
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
KX="$WORK/kpkg"
dpkg-deb -x "$DEB" "$KX"

VMLINUZ=$(ls "$KX"/boot/vmlinuz-* 2>/dev/null | head -n1)
[ -n "$VMLINUZ" ] || die "no /boot/vmlinuz-* in $DEB"
KMODSRC=""
for d in "$KX/lib/modules/$KVER" "$KX/usr/lib/modules/$KVER"; do
  [ -d "$d" ] && KMODSRC=$d && break
done
if [ -z "$KMODSRC" ]; then
  # package and module directory names may differ: take the only one there
  KMODSRC=$(ls -d "$KX"/lib/modules/* "$KX"/usr/lib/modules/* 2>/dev/null | head -n1)
  [ -n "$KMODSRC" ] || die "no lib/modules/ in $DEB"
  KVER=$(basename "$KMODSRC")
  STAMP="kver=$KVER
hash=$HASH"
fi
CONFIG="$KX/boot/config-$KVER"

# --- modules.dep: from the package, or generated with depmod -----------------
KB="$WORK/kbase"                       # depmod wants BASE/lib/modules/KVER
mkdir -p "$KB/lib/modules"
mv "$KMODSRC" "$KB/lib/modules/$KVER"
KM="$KB/lib/modules/$KVER"
if [ ! -s "$KM/modules.dep" ]; then
  depmod -b "$KB" "$KVER" || die "depmod failed"
fi

declare -A MODPATH=() MODDEPS=()
while IFS= read -r line; do
  path=${line%%:*}
  deps=${line#*:}
  name=$(basename "$path"); name=${name%%.ko*}; name=${name//-/_}
  MODPATH[$name]=$path
  MODDEPS[$name]=$deps
done < "$KM/modules.dep"

modname() { local n; n=$(basename "$1"); n=${n%%.ko*}; echo "${n//-/_}"; }
is_builtin() { grep -q "/$1\.ko\$" "$KM/modules.builtin" 2>/dev/null \
               || grep -q "/${1//_/-}\.ko\$" "$KM/modules.builtin" 2>/dev/null; }

# dependency-ordered (post-order DFS) list of modules
declare -A SEEN=()
ORDER=()
visit() {
  local m=$1 d
  [ -n "${SEEN[$m]:-}" ] && return 0
  SEEN[$m]=1
  for d in ${MODDEPS[$m]}; do visit "$(modname "$d")"; done
  ORDER+=("$m")
}
BOOT_ORDER=()
for m in $BOOT_MODULES; do
  if [ -n "${MODPATH[$m]:-}" ]; then
    visit "$m"
  elif is_builtin "$m"; then
    log "module $m is built into the kernel"
  else
    die "module $m neither in modules.dep nor built in"
  fi
done
BOOT_ORDER=("${ORDER[@]}")
for m in $EXTRA_MODULES; do
  if [ -n "${MODPATH[$m]:-}" ]; then visit "$m"
  elif ! is_builtin "$m"; then log "optional module $m not available, skipped"; fi
done

# --- root filesystem -------------------------------------------------------------
R="$WORK/root"
mkdir -p "$R"/usr/{bin,sbin,lib,lib64} "$R"/{dev,proc,sys,tmp,run,root,etc,mnt,var}
ln -s usr/bin "$R/bin"; ln -s usr/sbin "$R/sbin"; ln -s usr/lib "$R/lib"; ln -s usr/lib64 "$R/lib64"
ln -s ../tmp "$R/var/tmp"
chmod 1777 "$R/tmp"

# modules: decompressed, same relative path, own modules.dep via depmod
RM="$R/lib/modules/$KVER"
mkdir -p "$RM"
for m in "${ORDER[@]}"; do
  src="$KM/${MODPATH[$m]}"
  rel=${MODPATH[$m]%.ko*}.ko
  mkdir -p "$RM/$(dirname "$rel")"
  case "$src" in
    *.ko)     cp "$src" "$RM/$rel" ;;
    *.ko.xz)  xz -dc "$src" > "$RM/$rel" ;;
    *.ko.zst) zstd -qdc "$src" > "$RM/$rel" ;;
    *.ko.gz)  gzip -dc "$src" > "$RM/$rel" ;;
    *) die "unknown module file type: $src" ;;
  esac
done
for f in modules.order modules.builtin modules.builtin.modinfo; do
  [ -f "$KM/$f" ] && cp "$KM/$f" "$RM/"
done
depmod -b "$R" "$KVER" || die "depmod on the image failed"
: > "$R/etc/rw-modules.load"
for m in "${BOOT_ORDER[@]}"; do
  echo "${MODPATH[$m]%.ko*}.ko" >> "$R/etc/rw-modules.load"
done

# busybox with applet links (real tools copied below take precedence via PATH)
BB=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
case "$(ldd "$BB" 2>&1 || true)" in *"not a dynamic"*) ;; *) die "$BB is not static (install busybox-static)" ;; esac
cp "$BB" "$R/usr/bin/busybox"
for a in $("$BB" --list); do
  [ -e "$R/usr/bin/$a" ] || ln -s busybox "$R/usr/bin/$a"
done

# copy one ELF file plus its shared libraries (and the dynamic loader)
copy_file() {  # src [dst-path-in-root]
  local src=$1 dst=${2:-$1}
  [ -e "$R$dst" ] && return 0
  mkdir -p "$(dirname "$R$dst")"
  cp -L "$src" "$R$dst"
}
copy_elf() {
  local src=$1 dst=${2:-$1} lib
  copy_file "$src" "$dst"
  # lines: "libx.so => /path (0x..)", "/lib64/ld-linux-x86-64.so.2 (0x..)"
  while read -r lib; do
    [ -n "$lib" ] || continue
    copy_file "$lib"
  done < <(ldd "$src" 2>/dev/null | awk '/=> \//{print $3} /^[ \t]*\/[^ ]+ \(0x/{print $1}')
}

for p in $REQUIRED_PROGS; do
  hp=$(command -v "$p") || die "required program $p not found on the host (scripts/bootstrap.sh installs its package)"
  [ -e "$R$hp" ] && [ ! -L "$R$hp" ] && continue
  rm -f "$R$hp"
  copy_elf "$hp"
done
for p in $OPTIONAL_PROGS $OVERRIDE_PROGS; do
  hp=$(command -v "$p") || { log "optional program $p not on host, skipped"; continue; }
  rm -f "$R$hp" "$R/usr/bin/$p"     # replace busybox applet link (e.g. ping)
  copy_elf "$hp"
  # make the real tool win over a busybox link with the same name
  [ "$hp" = "/usr/bin/$p" ] || ln -sf "$hp" "$R/usr/bin/$p"
done
# busybox applets that clash with real tools: point to the real ones
for p in $REQUIRED_PROGS; do
  hp=$(command -v "$p")
  [ "$hp" = "/usr/bin/$p" ] || { rm -f "$R/usr/bin/$p"; ln -s "$hp" "$R/usr/bin/$p"; }
done

# glibc dlopens libgcc_s.so.1 for pthread_exit and pthread_cancel (rping's
# threads, qperf): no ldd lists it, so copy it by name.
LIBGCC=$(ldconfig -p 2>/dev/null | awk '/libgcc_s\.so\.1 .*x86-64/ && !f {print $NF; f = 1}')  # no early exit: ldconfig would die of SIGPIPE and pipefail end the build
[ -n "$LIBGCC" ] || die "libgcc_s.so.1 not found on the host (apt-get install libgcc-s1)"
copy_elf "$LIBGCC"

# Debian's busybox-static prefers its own applets inside "busybox sh" (so `tc`
# would be busybox's tc even with iproute2's first in PATH): use dash as /bin/sh
# so that PATH decides; bash (if present) for the interactive console.
DASH=$(command -v dash) || die "dash not found on the host"
rm -f "$R/usr/bin/sh" "$R$DASH"
copy_elf "$DASH"
[ "$DASH" = /usr/bin/dash ] || ln -sf "$DASH" "$R/usr/bin/dash"
ln -sf dash "$R/usr/bin/sh"
if BASH_BIN=$(command -v bash); then
  rm -f "$R$BASH_BIN"
  copy_elf "$BASH_BIN"
fi

# libibverbs provider for rxe
PROVDIR=$(ls -d /usr/lib/*/libibverbs 2>/dev/null | head -n1)
[ -n "$PROVDIR" ] || die "no libibverbs provider directory (install ibverbs-providers)"
RXELIB=$(ls "$PROVDIR"/librxe-rdmav*.so 2>/dev/null | head -n1)
[ -n "$RXELIB" ] || die "no librxe-rdmav*.so in $PROVDIR (install ibverbs-providers)"
copy_elf "$RXELIB"
[ -f /etc/libibverbs.d/rxe.driver ] || die "no /etc/libibverbs.d/rxe.driver"
copy_file /etc/libibverbs.d/rxe.driver
# tc's netem distribution tables, iproute2 config
for d in /usr/lib/tc /usr/lib/*/tc /usr/share/iproute2 /etc/iproute2; do
  [ -d "$d" ] && { mkdir -p "$R$d"; cp -a "$d/." "$R$d/"; }
done
# small /etc
for f in /etc/protocols /etc/services /etc/ld.so.conf; do [ -f "$f" ] && copy_file "$f"; done
[ -d /etc/ld.so.conf.d ] && { mkdir -p "$R/etc/ld.so.conf.d"; cp -a /etc/ld.so.conf.d/. "$R/etc/ld.so.conf.d/"; }
cat > "$R/etc/hosts" <<'EOF'
127.0.0.1	localhost
::1		localhost ip6-localhost ip6-loopback
EOF
echo 'root:x:0:0:root:/root:/bin/sh' > "$R/etc/passwd"
echo 'root:x:0:' > "$R/etc/group"
printf 'hosts: files\nnetworks: files\nprotocols: files\nservices: files\npasswd: files\ngroup: files\n' \
  > "$R/etc/nsswitch.conf"
echo "$KVER" > "$R/etc/rw-kernel-version"
ldconfig -r "$R" 2>/dev/null || log "WARNING: ldconfig -r failed (libraries still found in default paths)"

# guest scripts
install -m 0755 "$GUEST/init" "$R/init"
mkdir -p "$R/usr/lib/rw"
install -m 0755 "$GUEST/rw-cmdloop" "$R/usr/lib/rw/rw-cmdloop"

# sanity: every copied program resolves its libraries inside the image
LDSO=$(cd "$R" && ls lib64/ld-linux-*.so.* 2>/dev/null | head -n1)
[ -n "$LDSO" ] || die "dynamic loader not copied into the image"
for p in $REQUIRED_PROGS "$RXELIB"; do
  hp=$(command -v "$p" || echo "$p")
  out=$(chroot "$R" "/$LDSO" --list "$hp" 2>&1) || die "$p: loader check failed inside the image: $out"
  if echo "$out" | grep -q 'not found'; then die "$p misses libraries inside the image: $out"; fi
done

# --- pack -------------------------------------------------------------------------
# Uncompressed: under TCG the kernel's gunzip of ~15 MB costs about a second
# per boot, more than QEMU's loading the bigger file.
( cd "$R" && find . -mindepth 1 | sort | cpio -o -H newc --quiet -R 0:0 ) > "$WORK/initrd.img"
cp "$VMLINUZ" "$WORK/vmlinuz"

# Uncompressed vmlinux with its PVH entry note: QEMU boots it directly, which
# skips the bzImage's self-decompression (xz, several seconds under TCG).
has_pvh_note() { command -v readelf >/dev/null && readelf -n "$1" 2>/dev/null | grep -q '(0x00000012)'; }
extract_vmlinux() {  # bzImage out
  local in=$1 out=$2 spec kind magic off
  for spec in 'xz:\xfd7zXZ\x00' 'zstd:\x28\xb5\x2f\xfd' 'gzip:\x1f\x8b\x08'; do
    kind=${spec%%:*}; magic=${spec#*:}
    for off in $(grep -obUaP "$magic" "$in" 2>/dev/null | head -n 5 | cut -d: -f1 || true); do
      case $kind in
        xz)   tail -c +$((off + 1)) "$in" | xz -dc --single-stream > "$out" 2>/dev/null || true ;;
        zstd) tail -c +$((off + 1)) "$in" | zstd -qdc > "$out" 2>/dev/null || true ;;
        gzip) tail -c +$((off + 1)) "$in" | gzip -dc > "$out" 2>/dev/null || true ;;
      esac
      if [ "$(head -c 4 "$out" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] && has_pvh_note "$out"; then
        return 0
      fi
    done
  done
  rm -f "$out"
  return 1
}
rm -f "$OUTDIR/vmlinux"
if extract_vmlinux "$WORK/vmlinuz" "$WORK/vmlinux"; then
  mv -f "$WORK/vmlinux" "$OUTDIR/vmlinux"
else
  log "no PVH-bootable vmlinux could be extracted; guests boot the bzImage (slower)"
fi
mv -f "$WORK/vmlinuz" "$OUTDIR/vmlinuz"
mv -f "$WORK/initrd.img" "$OUTDIR/initrd.img"
echo "$KVER" > "$OUTDIR/kernel-version"
[ -f "$CONFIG" ] && cp "$CONFIG" "$OUTDIR/kernel-config"
printf '%s\n' "${BOOT_ORDER[@]}" > "$OUTDIR/modules.load"
printf '%s\n' "$STAMP" > "$OUTDIR/stamp"
T1=$(date +%s.%N)
log "done in $(awk -v a="$T0" -v b="$T1" 'BEGIN{printf "%.1f", b-a}') s: kernel $KVER, initrd $(du -h "$OUTDIR/initrd.img" | cut -f1), boot modules: ${BOOT_ORDER[*]}"
