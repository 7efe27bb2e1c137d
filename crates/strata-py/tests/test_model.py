"""The database against a Python dict, with reopens and ingested files
(hypothesis)."""

import tempfile

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import strata

keys = st.binary(min_size=0, max_size=6)
values = st.binary(min_size=0, max_size=40)
MEMORY_ONLY = strata.ReadOptions(read_tier="kBlockCacheTier")


class DictModel(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.dir = tempfile.TemporaryDirectory()
        self.path = self.dir.name + "/db"
        self.db = strata.Db(self.path, options=strata.Options(write_buffer_size=64 << 10))
        self.model = {}
        self.files = 0

    @rule(k=keys, v=values)
    def put(self, k, v):
        self.db[k] = v
        self.model[k] = v

    @rule(k=keys)
    def delete(self, k):
        del self.db[k]
        self.model.pop(k, None)

    @rule(items=st.lists(st.tuples(keys, st.one_of(st.none(), values)), max_size=8))
    def batch(self, items):
        with self.db.write_batch() as wb:
            for k, v in items:
                if v is None:
                    wb.delete(k)
                    self.model.pop(k, None)
                else:
                    wb.put(k, v)
                    self.model[k] = v

    @rule(lo=keys, hi=keys)
    def delete_range(self, lo, hi):
        if lo < hi:
            self.db.delete_range(lo, hi)
            for k in [k for k in self.model if lo <= k < hi]:
                del self.model[k]

    @rule()
    def flush(self):
        self.db.flush()

    @rule()
    def reopen(self):
        self.db.close()
        self.db = strata.Db(self.path, options=strata.Options(write_buffer_size=64 << 10))

    @rule(items=st.dictionaries(keys, st.one_of(st.none(), values), min_size=1, max_size=8))
    def ingest(self, items):
        self.files += 1
        path = "%s/ingest-%d.sst" % (self.dir.name, self.files)
        writer = strata.SstFileWriter(path)
        for k in sorted(items):
            if items[k] is None:
                writer.delete(k)
                self.model.pop(k, None)
            else:
                writer.put(k, items[k])
                self.model[k] = items[k]
        writer.finish()
        self.db.ingest_external_file([path], move_files=True)

    @rule(k=keys)
    def get(self, k):
        assert self.db.get(k) == self.model.get(k)

    @rule(k=keys)
    def get_from_memory_only(self, k):
        try:
            got = self.db.get(k, read_options=MEMORY_ONLY)
        except strata.Incomplete:
            return
        assert got == self.model.get(k)

    @rule(lo=keys, hi=keys, reverse=st.booleans())
    def scan(self, lo, hi, reverse):
        want = sorted(k for k in self.model if lo <= k < hi)
        if reverse:
            want.reverse()
        assert list(self.db.keys(start=lo, stop=hi, reverse=reverse)) == want

    @invariant()
    def same_items(self):
        assert list(self.db.items()) == sorted(self.model.items())

    def teardown(self):
        self.db.close()
        self.dir.cleanup()


TestDictModel = DictModel.TestCase
TestDictModel.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
