#!/usr/bin/env bash
# Differential check of `strata` against RocksDB's `ldb`: one seeded script of
# commands (put, batchput, load, delete, deleterange, compact, get, scan, dump
# and the column family commands) across the default family and created ones
# runs through both tools, each on its own directory. Every command's stdout
# and exit status must match byte for byte, and so must the final plain and
# --hex scans and dumps of every family. On a difference it prints a diff of
# the two transcripts and exits 1.
#
# Each command is a new process that opens the database anew: a writing
# command first replays the WAL the last one left and flushes it to a table,
# bulk loads set a 1 MiB memtable (ldb's --write_buffer_size) and so flush
# while they write, and `compact` merges the tables: recovery, flush and
# compaction are all on the path. Odd seeds write 0x00 bytes too.
#
# Usage: scripts/ldb-diff.sh [--release] [--steps=N] [--keep] [SEED...]
#   SEED      one run per seed (default: 1); the same seed gives the same script
#   --steps   random commands per seed before the final checks (default: 70)
#   --release build and run strata's release binary (default: debug)
#   --keep    keep the work directory and print its path
# STRATA=path/to/strata uses that binary instead of building one.
# Needs ldb on PATH (Debian's rocksdb-tools: scripts/install-rocksdb-tools.sh).
set -euo pipefail
# Byte order for [[ < ]], so comparing upper-case hex strings compares keys.
export LC_ALL=C
cd "$(dirname "$0")/.."

profile=debug
steps=70
keep=false
seeds=()
for arg in "$@"; do
  case $arg in
    --release) profile=release ;;
    --steps=*) steps=${arg#--steps=} ;;
    --keep) keep=true ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "unknown option $arg" >&2
      exit 2
      ;;
    *) seeds+=("$arg") ;;
  esac
done
[ ${#seeds[@]} -gt 0 ] || seeds=(1)

if ! command -v ldb >/dev/null; then
  echo "ldb not found: install it with scripts/install-rocksdb-tools.sh" >&2
  exit 2
fi
if [ -z "${STRATA:-}" ]; then
  build=(cargo build -q -p strata-cli)
  [ "$profile" = release ] && build+=(--release)
  "${build[@]}"
  STRATA=${CARGO_TARGET_DIR:-target}/$profile/strata
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ldb-diff.XXXXXX")
if [ "$keep" = true ]; then
  echo "work directory: $work" >&2
else
  trap 'rm -rf "$work"' EXIT
fi

# --- A seeded generator -----------------------------------------------------
# A 31-bit LCG in shell arithmetic: products stay below 2^62, so the sequence
# is the same wherever bash runs, unlike $RANDOM's.
rng=0
rand() { # rand N: REPLY in [0, N)
  rng=$(((rng * 1103515245 + 12345) % 2147483648))
  REPLY=$(((rng >> 8) % $1))
}

# Keys and values are drawn as upper-case hex (bytes sort as their hex
# strings do) and, for commands run without --hex, also as text.
text_hex() { # text_hex TEXT: REPLY = TEXT's bytes as upper-case hex
  local s=$1 i out=
  for ((i = 0; i < ${#s}; i++)); do
    printf -v out '%s%02X' "$out" "'${s:i:1}"
  done
  REPLY=$out
}

# Bytes that make binary keys interesting next to the text keys: 0x00 (in
# odd seeds, see `with_nul`), a newline, a space, '=' and '>' (load's arrow),
# 'k' (the text keys' first byte), DEL, and high bytes.
base_bytes=(01 0A 20 3D 3E 6B 7F 80 FE FF)
binary_bytes=()
# ldb prints keys and values without --hex as C strings, cut at the first
# 0x00 byte, where strata prints every byte (so a dump loads back whole).
# Odd seeds write 0x00 bytes and read only with --hex; even seeds write
# none and read both ways.
with_nul=false

# text_key_hex N: REPLY = key N's hex ('k' and three digits), without the
# fork of a command substitution: the generator draws thousands of keys.
text_key_hex() {
  printf -v REPLY '6B3%d3%d3%d' $(($1 / 100)) $(($1 / 10 % 10)) $(($1 % 10))
}

# pick_key MODE: KEY_HEX, and KEY_TEXT when MODE is plain. Text keys k000..k199
# collide often enough for overwrites, deletes and ranges to meet.
pick_key() {
  rand 10
  if [ "$1" = hex ] && [ "$REPLY" -lt 4 ]; then
    local n i
    rand 3
    n=$((REPLY + 1))
    KEY_HEX=
    rand 3
    # Sometimes a text key's prefix, so binary keys sort among text ones.
    if [ "$REPLY" = 0 ]; then
      rand 200
      text_key_hex "$REPLY"
      KEY_HEX=$REPLY
    fi
    for ((i = 0; i < n; i++)); do
      rand ${#binary_bytes[@]}
      KEY_HEX+=${binary_bytes[REPLY]}
    done
    KEY_TEXT=
    return
  fi
  rand 200
  printf -v KEY_TEXT 'k%03d' "$REPLY"
  text_key_hex "$REPLY"
  KEY_HEX=$REPLY
}

# pick_value MODE: VALUE_HEX, and VALUE_TEXT when MODE is plain. Mostly
# short, sometimes empty, sometimes holding load's arrow, sometimes large
# enough to fill blocks.
value_counter=0
big_only=false
pick_value() {
  local pad=
  value_counter=$((value_counter + 1))
  if [ "$big_only" = true ]; then REPLY=2; else rand 20; fi
  case $REPLY in
    0) VALUE_TEXT= ;;
    1) VALUE_TEXT="v$value_counter ==> arrow" ;;
    2)
      rand 3000
      printf -v pad '%*s' $((REPLY + 1000)) ''
      VALUE_TEXT="big$value_counter"
      ;;
    3) VALUE_TEXT="v $value_counter with spaces " ;;
    *) VALUE_TEXT="v$seed.$value_counter" ;;
  esac
  # The padding is added after the hex is drawn: hex digit by digit in
  # shell would take seconds for the big values.
  if [ "$1" = hex ]; then
    rand 4
    if [ "$REPLY" = 0 ]; then
      # Binary values: bytes of any kind.
      local i
      rand 6
      VALUE_HEX=
      for ((i = 0; i <= REPLY; i++)); do
        if [ "$with_nul" = true ]; then rand 256; else
          rand 255
          REPLY=$((REPLY + 1))
        fi
        printf -v VALUE_HEX '%s%02X' "$VALUE_HEX" "$REPLY"
      done
    else
      text_hex "$VALUE_TEXT"
      VALUE_HEX=$REPLY${pad// /78}
    fi
  else
    VALUE_HEX=
  fi
  VALUE_TEXT+=${pad// /x}
}

# The arguments of a key or value in MODE: `0x...` with --hex, else the text.
key_arg() { if [ "$1" = hex ]; then REPLY=0x$KEY_HEX; else REPLY=$KEY_TEXT; fi; }
value_arg() { if [ "$1" = hex ]; then REPLY=0x$VALUE_HEX; else REPLY=$VALUE_TEXT; fi; }

# One command per line: fields split by 0x1F (not whitespace, so empty
# arguments survive `read`), ended by a "." field for the same reason.
# Fields: command, family ("-" for none), mode (plain or hex), arguments.
US=$'\x1f'
emit() {
  local line= field
  for field in "$@"; do line+=$field$US; done
  printf '%s.\n' "$line" >>"$ops"
}

families=(default)
dropped=()
pick_family() {
  rand ${#families[@]}
  FAMILY=${families[REPLY]}
}
pick_mode() {
  rand 2
  if [ "$REPLY" = 0 ]; then MODE=plain; else MODE=hex; fi
}
# read_mode MODE: the mode of a command that prints keys or values.
read_mode() {
  if [ "$with_nul" = true ]; then REPLY=hex; else REPLY=$1; fi
}

# A file of `key ==> value` lines for `load`: many keys, repeats (the later
# line wins), in the hex form or as text, with lines `load` must skip or must
# not skip. A bulk load writes 1-2 MiB of big values: more than the 1 MiB
# memtable its command sets, so it flushes while it writes.
load_count=0
gen_load() { # gen_load MODE BULK: REPLY = the file
  local mode=$1 file n i
  load_count=$((load_count + 1))
  file=$work/load-$seed-$load_count.txt
  big_only=$2
  if [ "$big_only" = true ]; then
    rand 400
    n=$((REPLY + 400))
  else
    rand 1500
    n=$((REPLY + 200))
  fi
  for ((i = 0; i < n; i++)); do
    pick_key "$mode"
    pick_value "$mode"
    if [ "$mode" = hex ]; then
      rand 4
      # ldb takes hex digits of either case after a lower-case 0x.
      if [ "$REPLY" = 0 ]; then
        printf '0x%s ==> 0x%s\n' "${KEY_HEX,,}" "${VALUE_HEX,,}"
      else
        printf '0x%s ==> 0x%s\n' "$KEY_HEX" "$VALUE_HEX"
      fi
    else
      rand 60
      case $REPLY in
        0) printf 'not a pair\n' ;;
        # ldb reads each line up to "\n": a "\r" before it is data.
        1) printf '%s ==> %s\r\n' "$KEY_TEXT" "$VALUE_TEXT" ;;
        # ldb skips a dump's footer only when it is not a pair.
        2) printf 'Keys in range: %s ==> %s\n' "$KEY_TEXT" "$VALUE_TEXT" ;;
        3) printf 'Keys in range: %s\n' "$i" ;;
        4) printf ' %s  ==> %s\n' "$KEY_TEXT" "$VALUE_TEXT" ;;
        *) printf '%s ==> %s\n' "$KEY_TEXT" "$VALUE_TEXT" ;;
      esac
    fi
  done >"$file"
  big_only=false
  REPLY=$file
}

gen_step() {
  local mode a b args pairs i
  pick_family
  pick_mode
  mode=$MODE
  rand 100
  if [ "$REPLY" -lt 24 ]; then
    pick_key "$mode"
    pick_value "$mode"
    key_arg "$mode" && a=$REPLY
    value_arg "$mode" && b=$REPLY
    emit put "$FAMILY" "$mode" "$a" "$b"
  elif [ "$REPLY" -lt 30 ]; then
    rand 3
    pairs=$((REPLY + 1))
    args=()
    for ((i = 0; i < pairs; i++)); do
      pick_key "$mode"
      pick_value "$mode"
      key_arg "$mode" && args+=("$REPLY")
      value_arg "$mode" && args+=("$REPLY")
    done
    emit batchput "$FAMILY" "$mode" "${args[@]}"
  elif [ "$REPLY" -lt 44 ]; then
    pick_key "$mode"
    key_arg "$mode"
    emit delete "$FAMILY" "$mode" "$REPLY"
  elif [ "$REPLY" -lt 58 ]; then
    gen_delete_range "$mode"
  elif [ "$REPLY" -lt 66 ]; then
    rand 3
    if [ "$REPLY" = 0 ]; then
      gen_load "$mode" true
      # Not smaller: ldb 7.8.3 aborts on an assertion in MemTable's
      # constructor with a 256 KiB memtable (its first arena block already
      # asks for a flush); 1 MiB works.
      emit load "$FAMILY" "$mode" "$REPLY" --write_buffer_size=1048576
    else
      gen_load "$mode" false
      emit load "$FAMILY" "$mode" "$REPLY"
    fi
  elif [ "$REPLY" -lt 73 ]; then
    gen_compact "$mode"
  elif [ "$REPLY" -lt 85 ]; then
    read_mode "$mode" && mode=$REPLY
    pick_key "$mode"
    key_arg "$mode"
    emit get "$FAMILY" "$mode" "$REPLY"
  elif [ "$REPLY" -lt 93 ]; then
    read_mode "$mode"
    gen_scan "$REPLY"
  elif [ ${#families[@]} -ge 2 ]; then
    gen_family_change
  else
    read_mode "$mode"
    emit scan "$FAMILY" "$REPLY"
  fi
}

# Orders two keys into KEY_A <= KEY_B (their hex and their arguments).
pick_range() {
  local mode=$1 ha ta hb tb
  pick_key "$mode"
  ha=$KEY_HEX ta=$KEY_TEXT
  pick_key "$mode"
  hb=$KEY_HEX tb=$KEY_TEXT
  if [[ $hb < $ha ]]; then
    KEY_HEX=$ha KEY_TEXT=$ta
    key_arg "$mode" && RANGE_B=$REPLY
    KEY_HEX=$hb KEY_TEXT=$tb
    key_arg "$mode" && RANGE_A=$REPLY
  else
    KEY_HEX=$ha KEY_TEXT=$ta
    key_arg "$mode" && RANGE_A=$REPLY
    KEY_HEX=$hb KEY_TEXT=$tb
    key_arg "$mode" && RANGE_B=$REPLY
  fi
  return 0
}

gen_delete_range() {
  local mode=$1
  pick_range "$mode"
  # begin == end is an empty range: both tools print OK and delete nothing.
  rand 20
  if [ "$REPLY" = 0 ]; then
    # Inverted on purpose: both tools must refuse it (exit status 1).
    emit deleterange "$FAMILY" "$mode" "$RANGE_B" "$RANGE_A"
  else
    emit deleterange "$FAMILY" "$mode" "$RANGE_A" "$RANGE_B"
  fi
}

gen_compact() {
  local mode=$1
  rand 2
  if [ "$REPLY" = 0 ]; then
    emit compact "$FAMILY" "$mode"
  else
    pick_range "$mode"
    emit compact "$FAMILY" "$mode" "--from=$RANGE_A" "--to=$RANGE_B"
  fi
}

gen_scan() {
  local mode=$1
  pick_range "$mode"
  rand 4
  case $REPLY in
    0) emit scan "$FAMILY" "$mode" "--from=$RANGE_A" "--to=$RANGE_B" ;;
    1) emit scan "$FAMILY" "$mode" "--from=$RANGE_A" "--max_keys=7" --no_value ;;
    # Not --count_only: ldb adds a histogram of value sizes to the count.
    *) emit dump "$FAMILY" "$mode" "--to=$RANGE_B" ;;
  esac
}

# Creates a family (named anew each time: RocksDB keeps a dropped family's
# name reserved until the handle closes, which no command here can see), or
# drops one other than default and cf1.
gen_family_change() {
  local name
  if [ ${#families[@]} -ge 3 ]; then
    name=${families[2]}
    families=("${families[@]:0:2}" "${families[@]:3}")
    dropped+=("$name")
    emit drop_column_family - plain "$name"
  else
    name=cf$((${#families[@]} + ${#dropped[@]}))
    families+=("$name")
    emit create_column_family - plain "$name"
  fi
  emit list_column_families - plain
}

gen_script() {
  rng=$((seed % 2147483648))
  rand 2 # mixes the seed into the state
  binary_bytes=("${base_bytes[@]}")
  with_nul=false
  if ((seed % 2)); then
    with_nul=true
    binary_bytes+=(00)
  fi
  families=(default)
  dropped=()
  value_counter=0
  load_count=0
  ops=$work/ops-$seed
  : >"$ops"
  emit put default plain first "$seed"
  local step
  for ((step = 0; step < steps; step++)); do
    # cf1 appears early, so most of the script writes two families.
    if [ "$step" = 4 ]; then
      families+=(cf1)
      emit create_column_family - plain cf1
    fi
    gen_step
  done
  # The final checks: every live family, whole, in both forms.
  emit list_column_families - plain
  local family text
  read_mode plain && text=$REPLY
  for family in "${families[@]}"; do
    emit scan "$family" "$text"
    emit scan "$family" hex
    emit dump "$family" hex
  done
  for family in default cf1; do
    emit compact "$family" plain
    emit scan "$family" hex --no_value
    emit dump "$family" "$text"
  done
}

# --- Running a script -------------------------------------------------------
# run_script TOOL DIR TRANSCRIPT: each command's line, exit status and stdout.
run_script() {
  local tool=$1 dir=$2 out=$3 n=0 f cmd family mode rc
  local stdout=$out.stdout stderr=$out.stderr
  : >"$out"
  : >"$stderr"
  while IFS=$US read -r -a f; do
    n=$((n + 1))
    cmd=${f[0]} family=${f[1]} mode=${f[2]}
    local args=("${f[@]:3:${#f[@]}-4}")
    local flags=("--db=$dir")
    [ "$n" = 1 ] && flags+=(--create_if_missing)
    [ "$family" != - ] && flags+=("--column_family=$family")
    [ "$mode" = hex ] && flags+=(--hex)
    rc=0
    if [ "$cmd" = load ]; then
      "$tool" "${flags[@]}" load "${args[@]:1}" <"${args[0]}" >"$stdout" 2>>"$stderr" || rc=$?
    else
      "$tool" "${flags[@]}" "$cmd" "${args[@]}" >"$stdout" 2>>"$stderr" </dev/null || rc=$?
    fi
    # The big values make lines long: the transcript keeps their start.
    printf '### %d %s %s %s %.200s rc=%d\n' "$n" "$cmd" "$family" "$mode" "${args[*]}" "$rc" >>"$out"
    if [ "$cmd" = list_column_families ]; then
      sed "s|$dir|DB|" "$stdout" >>"$out"
    else
      cat "$stdout" >>"$out"
    fi
  done <"$ops"
  rm -f "$stdout"
}

# Names the first command whose output or exit status differs, then shows
# the diff (control bytes made visible by cat -v, long lines cut).
report_difference() {
  local line
  line=$(cmp "$1" "$2" 2>&1 | sed -n 's/.*line \([0-9]*\).*/\1/p' || true)
  echo "seed $seed: strata differs from ldb, first in this command (ldb's transcript):"
  head -n "${line:-1}" "$1" | grep -a '^### ' | tail -n 1 | cut -c1-200 | cat -v
  echo "(--keep keeps each tool's stderr in $(basename "$1").stderr and $(basename "$2").stderr)"
  echo "diff (- ldb, + strata):"
  diff -a -u "$1" "$2" | cut -c1-200 | cat -v | head -n 60 || true
}

# run_seed SEED: generates SEED's script, runs it through both tools at
# once, and reports; fails when the transcripts differ.
run_seed() {
  local start=$SECONDS ldb_pid strata_pid commands lines
  seed=$1
  gen_script
  run_script ldb "$work/ldb-$seed" "$work/ldb-$seed.out" &
  ldb_pid=$!
  run_script "$STRATA" "$work/strata-$seed" "$work/strata-$seed.out" &
  strata_pid=$!
  wait "$ldb_pid"
  wait "$strata_pid"
  commands=$(wc -l <"$ops")
  lines=$(wc -l <"$work/ldb-$seed.out")
  if ! cmp -s "$work/ldb-$seed.out" "$work/strata-$seed.out"; then
    report_difference "$work/ldb-$seed.out" "$work/strata-$seed.out"
    return 1
  fi
  echo "seed $seed: $commands commands, $lines transcript lines identical ($((SECONDS - start)) s)"
}

# Two seeds at a time: the tools mostly wait on fsync, so two seeds take
# little longer than one.
failed=0
for ((i = 0; i < ${#seeds[@]}; i += 2)); do
  batch=("${seeds[@]:i:2}")
  pids=()
  for seed in "${batch[@]}"; do
    run_seed "$seed" >"$work/report-$seed" 2>&1 &
    pids+=($!)
  done
  for j in "${!batch[@]}"; do
    wait "${pids[j]}" || failed=1
    cat "$work/report-${batch[j]}"
  done
done
exit "$failed"
