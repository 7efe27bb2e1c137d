"""Options as attributes, and ReadOptions on reads and iterators."""

import pytest

import strata


def test_options_read_and_set_as_attributes():
    opts = strata.Options(max_background_jobs=3, compression="kZSTD")
    assert opts.max_background_jobs == 3
    assert opts.compression == "kZSTD"
    assert opts.create_if_missing is True
    opts.whole_key_filtering = False
    opts.block_size = 16384
    assert opts.whole_key_filtering is False and opts.block_size == 16384
    assert opts.get("block_size") == 16384
    assert "level0_file_num_compaction_trigger" in dir(opts)
    assert opts.merge_operator is None
    opts.merge_operator = "uint64add"
    assert opts.merge_operator == "UInt64AddOperator"
    opts.merge_operator = None
    assert opts.merge_operator is None
    with pytest.raises(AttributeError, match="no_such_option"):
        opts.no_such_option
    with pytest.raises(strata.InvalidArgument, match="no_such_option"):
        opts.no_such_option = 1
    with pytest.raises(strata.InvalidArgument, match="block_size"):
        opts.block_size = "big"
    with pytest.raises(TypeError, match="bytes"):
        opts.block_size = b"16384"


def test_options_set_as_attributes_reach_the_options_file(tmp_path):
    opts = strata.Options()
    opts.write_buffer_size = 2 << 20
    opts.merge_operator = "uint64add"
    path = str(tmp_path / "db")
    with strata.Db(path, options=opts) as db:
        db.merge(b"n", (2).to_bytes(8, "little"))
        db.merge(b"n", (3).to_bytes(8, "little"))
        assert int.from_bytes(db[b"n"], "little") == 5
    loaded, _ = strata.Options.load_latest(path)
    assert loaded.write_buffer_size == 2 << 20
    assert loaded.merge_operator == opts.merge_operator


def test_read_options_bound_iterators_and_reads(db):
    for i in range(20):
        db[b"k%02d" % i] = b"v%d" % i
    bounded = strata.ReadOptions(iterate_lower_bound=b"k05", iterate_upper_bound=b"k08")
    assert bounded.iterate_upper_bound == b"k08"
    assert list(db.keys(read_options=bounded)) == [b"k05", b"k06", b"k07"]
    assert list(db.keys(reverse=True, read_options=bounded)) == [b"k07", b"k06", b"k05"]
    # The bounds and start/stop both hold.
    assert list(db.keys(start=b"k06", read_options=bounded)) == [b"k06", b"k07"]
    it = db.iterator(read_options=bounded)
    it.seek_to_first()
    assert it.key() == b"k05"
    it.seek_to_last()
    assert it.key() == b"k07"
    quiet = strata.ReadOptions(fill_cache=False, verify_checksums=False, readahead_size=1 << 20)
    db.flush()
    assert db.get(b"k03", read_options=quiet) == b"v3"
    assert db.get_many([b"k03", b"zz"], read_options=quiet) == [b"v3", None]
    assert len(list(db.items(read_options=quiet))) == 20
    bounded.iterate_upper_bound = None
    assert list(db.keys(read_options=bounded))[-1] == b"k19"
    with pytest.raises(TypeError, match="iterate_lower_bound must be bytes"):
        strata.ReadOptions(iterate_lower_bound="k")


def test_read_options_through_a_snapshot_keep_its_point_in_time(db):
    db[b"a"] = b"old"
    with db.snapshot() as snap:
        db[b"a"] = b"new"
        db[b"b"] = b"later"
        ro = strata.ReadOptions(fill_cache=False)
        assert snap.get(b"a", read_options=ro) == b"old"
        assert list(snap.keys(read_options=ro)) == [b"a"]


def test_write_options_on_every_write(tmp_path):
    path = str(tmp_path / "db")
    synced = strata.WriteOptions(sync=True)
    unlogged = strata.WriteOptions(disable_wal=True)
    assert synced.sync and not synced.disable_wal
    counters = strata.Options(merge_operator="uint64add")
    with strata.Db(path, options=counters) as db:
        db.put(b"a", b"1", write_options=synced)
        db.put(b"b", b"2", write_options=unlogged)
        db.delete(b"a", write_options=synced)
        db.merge(b"n", (4).to_bytes(8, "little"), write_options=unlogged)
        db.put(b"r1", b"x")
        db.delete_range(b"r", b"s", write_options=synced)
        batch = strata.WriteBatch()
        batch.put(b"c", b"3")
        db.write(batch, write_options=unlogged)
        with db.write_batch(write_options=synced) as wb:
            wb.put(b"d", b"4")
        assert db.get(b"b") == b"2" and db.get(b"a") is None and db.get(b"r1") is None
    # Writes without the WAL are flushed by close, so all survive it.
    with strata.Db(path, options=counters) as db:
        assert list(db.items()) == [
            (b"b", b"2"),
            (b"c", b"3"),
            (b"d", b"4"),
            (b"n", (4).to_bytes(8, "little")),
        ]


def test_read_tier_limits_a_read_to_memory(tmp_path):
    path = str(tmp_path / "db")
    with strata.Db(path) as db:
        for i in range(1000):
            db[b"k%04d" % i] = b"v" * 50
        db.flush()
    memory = strata.ReadOptions(read_tier="kBlockCacheTier")
    assert memory.read_tier == "kBlockCacheTier"
    with strata.Db(path) as db:
        # Nothing of the table is in memory after the reopen.
        with pytest.raises(strata.Incomplete, match="kBlockCacheTier"):
            db.get(b"k0010", read_options=memory)
        with pytest.raises(strata.Incomplete):
            list(db.keys(read_options=memory))
        # A plain read goes to the file (and caches the block), after
        # which memory answers.
        assert db[b"k0010"] == b"v" * 50
        assert db.get(b"k0011", read_options=memory) == b"v" * 50
        assert db.get(b"missing", read_options=memory) is None
        db[b"fresh"] = b"1"
        assert db.get(b"fresh", read_options=memory) == b"1"
    with pytest.raises(strata.InvalidArgument, match="kNoSuchTier"):
        strata.ReadOptions(read_tier="kNoSuchTier")


def _u64(n):
    return n.to_bytes(8, "little")


def _latest_options_file(path):
    import os

    names = sorted(n for n in os.listdir(path) if n.startswith("OPTIONS-"))
    return os.path.join(path, names[-1])


def test_plain_open_keeps_every_familys_stored_merge_operator(tmp_path):
    path = str(tmp_path / "db")
    counters = strata.Options(merge_operator="uint64add")
    words = strata.Options(merge_operator="stringappend")
    with strata.Db(path, options=counters, column_families={"words": words}) as db:
        db.merge(b"n", _u64(2))
        db.get_column_family("words").merge(b"w", b"a")
    # A plain open, as rocksdict's Rdict(path): every family keeps the
    # operator its OPTIONS file names, and merges go on where they left off.
    with strata.Db(path) as db:
        assert int.from_bytes(db[b"n"], "little") == 2
        words_cf = db.get_column_family("words")
        assert words_cf[b"w"] == b"a"
        db.merge(b"n", _u64(3))
        words_cf.merge(b"w", b"b")
    # The open wrote the operators back, not less.
    loaded, families = strata.Options.load_latest(path)
    assert loaded.merge_operator == "UInt64AddOperator"
    assert dict(families)["words"].merge_operator == words.merge_operator
    with strata.Db(path, read_only=True) as db:
        assert int.from_bytes(db[b"n"], "little") == 5
        assert db.get_column_family("words")[b"w"] == b"a,b"
    with strata.Db(path) as db:
        assert int.from_bytes(db[b"n"], "little") == 5
        assert db.get_column_family("words")[b"w"] == b"a,b"


def test_options_set_by_name_win_over_the_stored_ones(tmp_path):
    path = str(tmp_path / "db")
    stored = strata.Options(
        merge_operator="uint64add", write_buffer_size=2 << 20, error_if_exists=True
    )
    family = strata.Options(merge_operator="max", block_size=8192)
    with strata.Db(path, options=stored, column_families={"top": family}) as db:
        db.merge(b"n", _u64(1))
        db.get_column_family("top").merge(b"m", _u64(7))
    # Only what is set by name changes; the rest (the merge operators above
    # all) stays as stored, and error_if_exists was for the first open only.
    changed = strata.Options(max_background_jobs=3)
    changed.level0_file_num_compaction_trigger = 6
    top = strata.Options(write_buffer_size=3 << 20)
    with strata.Db(path, options=changed, column_families={"top": top}) as db:
        db.merge(b"n", _u64(4))
        assert int.from_bytes(db[b"n"], "little") == 5
        assert int.from_bytes(db.get_column_family("top")[b"m"], "little") == 7
    loaded, families = strata.Options.load_latest(path)
    assert loaded.max_background_jobs == 3
    assert loaded.level0_file_num_compaction_trigger == 6
    assert loaded.write_buffer_size == 2 << 20
    assert loaded.merge_operator == "UInt64AddOperator"
    top_loaded = dict(families)["top"]
    assert top_loaded.write_buffer_size == 3 << 20
    assert top_loaded.block_size == 8192
    assert top_loaded.merge_operator == "MaxOperator"
    # Options read back with load_latest open the database as stored.
    with strata.Db(path, options=loaded, column_families=dict(families)) as db:
        assert int.from_bytes(db[b"n"], "little") == 5


def test_plain_open_refuses_a_stored_operator_it_cannot_supply(tmp_path):
    path = str(tmp_path / "db")
    with strata.Db(path, options=strata.Options(merge_operator="uint64add")) as db:
        db.merge(b"n", _u64(1))
    # As if an application with an operator of its own had written it.
    options_file = _latest_options_file(path)
    with open(options_file) as f:
        text = f.read()
    assert "merge_operator=UInt64AddOperator" in text
    text = text.replace("merge_operator=UInt64AddOperator", "merge_operator=AppCounter")
    with open(options_file, "w") as f:
        f.write(text)
    with pytest.raises(strata.InvalidArgument, match="AppCounter"):
        strata.Db(path)
    with pytest.raises(strata.InvalidArgument, match="AppCounter"):
        strata.Db(path, read_only=True)
    # The refused open rewrote nothing.
    assert _latest_options_file(path) == options_file
    with open(options_file) as f:
        assert f.read() == text


def test_plain_open_refuses_a_stored_compaction_filter_it_cannot_supply(tmp_path):
    path = str(tmp_path / "db")
    with strata.Db(path) as db:
        db[b"k"] = b"tmp:1"
    # As if an application with a compaction filter of its own had written it.
    options_file = _latest_options_file(path)
    with open(options_file) as f:
        text = f.read()
    assert "compaction_filter=nullptr" in text
    text = text.replace(
        "compaction_filter=nullptr", "compaction_filter=my.DropTmpFilter", 1
    )
    with open(options_file, "w") as f:
        f.write(text)
    # Opened without the filter, compactions would keep what it drops and
    # the next OPTIONS file would say nullptr: the open is refused instead
    # (it used to succeed and drop the filter).
    with pytest.raises(strata.InvalidArgument, match="my.DropTmpFilter"):
        strata.Db(path)
    with pytest.raises(strata.InvalidArgument, match="my.DropTmpFilter"):
        strata.Options.load_latest(path)
    # The refused open rewrote nothing.
    assert _latest_options_file(path) == options_file
    with open(options_file) as f:
        assert f.read() == text
