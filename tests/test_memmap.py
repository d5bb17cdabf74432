"""Views of memory-mapped files pickle by reference (path + region), validated on unpickling.

The reference for values is NumPy's ``np.broadcast_to`` over the same file read with
``np.load`` / ``np.fromfile``; round trips run in a fresh interpreter (``subprocess``), as a
spawn worker or a dask worker would.
"""

import os
import pickle
import shutil
import sys

import numpy as np
import pytest
from _subprocess import fresh_process

import lazybcast
from lazybcast import _memmap


def _npy(tmp_path, array, name="data.npy"):
    path = str(tmp_path / name)
    np.save(path, array)
    return path


CHILD = """
import pickle, sys
import numpy as np
view = pickle.load(open(sys.argv[1], "rb"))
ref = np.load(sys.argv[2])
np.save(sys.argv[3], view.materialize())
print(type(view).__name__, view.shape, view.mode, view.base.shape)
"""


def _views(path):
    """Views over slices of a memory-mapped .npy: strided, reversed, broadcast."""
    m = np.load(path, mmap_mode="r")
    return {
        "whole": lazybcast.broadcast_to(m, m.shape),
        "rows": lazybcast.broadcast_to(m[3:9, None], (6, 5, m.shape[1])),
        "reversed": lazybcast.broadcast_to(m[::-2, ::-3], (m.shape[0] // 2, -(-m.shape[1] // 3))),
        "column": lazybcast.broadcast(m[:, 7], (4, m.shape[0]), mode="numpy"),
        "bidirectional": lazybcast.broadcast(m[:, :1], (1, 4), mode="bidirectional"),
        "element": lazybcast.broadcast_to(m[2:3, 3:4], (3, 3)),
    }


@pytest.mark.parametrize("name", ["whole", "rows", "reversed", "column", "bidirectional",
                                  "element"])
def test_round_trip_in_afresh_process(tmp_path, name):
    data = np.arange(40 * 30, dtype=np.float32).reshape(40, 30)
    path = _npy(tmp_path, data)
    view = _views(path)[name]
    blob = pickle.dumps(view, protocol=pickle.HIGHEST_PROTOCOL)
    assert len(blob) < 600, len(blob)  # the path and the region, not the bytes
    assert path.encode() in blob
    (tmp_path / "view.pkl").write_bytes(blob)
    out = fresh_process(CHILD, str(tmp_path / "view.pkl"), path, str(tmp_path / "got.npy"))
    assert out.split()[0] == "BroadcastView"
    got = np.load(tmp_path / "got.npy")
    np.testing.assert_array_equal(got, np.broadcast_to(view.source, view.shape))
    back = pickle.loads(blob)
    assert back.shape == view.shape and back.mode == view.mode and back.strides == view.strides
    assert back.base.shape == view.base.shape or back.base is back.source


@pytest.mark.parametrize("opened", ["np.load", "np.memmap"])
def test_maps_opened_by_a_path_object_pickle_by_reference(tmp_path, opened):
    """NumPy keeps a map opened by a ``pathlib.Path`` under ``filename`` as the resolved Path
    (a str when opened by a str): both are a file's name."""
    data = np.arange(40 * 30, dtype=np.float32).reshape(40, 30)
    path = tmp_path / "data.npy"
    np.save(path, data)
    if opened == "np.load":
        m = np.load(path, mmap_mode="r")
    else:
        m = np.memmap(path, dtype=np.float32, mode="r", offset=128, shape=(40, 30))
    assert not isinstance(m.filename, str)  # what this test is about
    view = lazybcast.broadcast_to(m[::-2, 3:], (7, 20, 27))
    blob = pickle.dumps(view)
    assert len(blob) < 600, len(blob)  # the path and the region, not 4 kB of floats
    assert str(path.resolve()).encode() in blob
    np.testing.assert_array_equal(pickle.loads(blob), np.broadcast_to(data[::-2, 3:], view.shape))
    assert _memmap.file_token(view.source) is not None


def test_unpickled_source_is_read_only_and_repickles_by_reference(tmp_path):
    path = _npy(tmp_path, np.arange(1000.0))
    view = lazybcast.broadcast_to(np.load(path, mmap_mode="r+")[10:20], (5, 10))
    back = pickle.loads(pickle.dumps(view))
    assert not back.source.flags.writeable
    again = pickle.dumps(back)
    assert len(again) < 600
    np.testing.assert_array_equal(pickle.loads(again).materialize(), view.materialize())


def test_raw_memmap_with_offset_and_structured_dtype(tmp_path):
    dtype = np.dtype([("a", "<i4"), ("b", "<f8")])
    path = str(tmp_path / "raw.bin")
    data = np.zeros(5000, dtype=dtype)
    data["a"] = np.arange(5000)
    data["b"] = np.arange(5000) / 2
    with open(path, "wb") as f:
        f.write(b"x" * 12345)
        data.tofile(f)
    m = np.memmap(path, dtype=dtype, mode="r", offset=12345 + 100 * dtype.itemsize,
                  shape=(4000,))
    view = lazybcast.broadcast_to(m[::7][:, None], (572, 3))
    blob = pickle.dumps(view)
    assert len(blob) < 800
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back.materialize(), np.broadcast_to(data[100::7][:572, None],
                                                                      (572, 3)))


def test_moved_file_is_a_clear_error(tmp_path):
    path = _npy(tmp_path, np.arange(100.0))
    blob = pickle.dumps(lazybcast.broadcast_to(np.load(path, mmap_mode="r"), (2, 100)))
    shutil.move(path, str(tmp_path / "elsewhere.npy"))
    with pytest.raises(FileNotFoundError, match="data.npy.*does not exist.*pickle_by_value"):
        pickle.loads(blob)


def test_truncated_file_is_a_clear_error_in_afresh_process(tmp_path):
    path = _npy(tmp_path, np.arange(10000.0))
    blob = pickle.dumps(lazybcast.broadcast_to(np.load(path, mmap_mode="r")[5000:], (2, 5000)))
    size = os.path.getsize(path)
    os.truncate(path, size - 8)  # the region's last element is now outside the file
    (tmp_path / "view.pkl").write_bytes(blob)
    code = """
    import pickle, sys
    try:
        pickle.load(open(sys.argv[1], "rb"))
    except ValueError as e:
        print("ValueError:", e)
    """
    out = fresh_process(code, str(tmp_path / "view.pkl"))
    assert out.startswith("ValueError:") and path in out
    assert f"the file has {size - 8} bytes (it had {size} when pickled)" in out


def test_a_file_that_changed_size_is_refused(tmp_path):
    path = _npy(tmp_path, np.arange(100.0))
    blob = pickle.dumps(lazybcast.broadcast_to(np.load(path, mmap_mode="r")[:10], (2, 10)))
    with open(path, "ab") as f:
        f.write(b"more")
    with pytest.raises(ValueError, match="changed in between"):
        pickle.loads(blob)


def test_by_value_on_request_and_for_private_maps(tmp_path):
    path = _npy(tmp_path, np.arange(10000.0))
    view = lazybcast.broadcast_to(np.load(path, mmap_mode="r"), (3, 10000))
    with lazybcast.pickle_by_value():
        blob = pickle.dumps(view)
    assert len(pickle.dumps(view)) < 600  # only inside the block
    assert len(blob) > 80000
    os.remove(path)
    np.testing.assert_array_equal(pickle.loads(blob).materialize()[2], np.arange(10000.0))
    # mode="c" (copy-on-write): this process's changes are private, so the bytes travel
    path = _npy(tmp_path, np.arange(10000.0), "c.npy")
    private = np.load(path, mmap_mode="c")
    private[0] = -1.0
    back = pickle.loads(pickle.dumps(lazybcast.broadcast_to(private, (2, 10000))))
    assert back.materialize()[1, 0] == -1.0


def test_row_dataset_pickles_by_reference(tmp_path):
    path = _npy(tmp_path, np.arange(200_000, dtype=np.float32).reshape(2000, 100))
    ds = lazybcast.RowDataset(lazybcast.broadcast_to(np.load(path, mmap_mode="r")[:, None],
                                                     (2000, 4, 100)))
    blob = pickle.dumps(ds)
    assert len(blob) < 700, len(blob)
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back[1999], np.broadcast_to(np.arange(199900, 200000.0),
                                                              (4, 100)))


@pytest.mark.parametrize("args, error, match", [
    (("{p}", 800, np.dtype("f8"), 0, (200,), (8,)), ValueError, "needs bytes"),
    (("{p}", 800, np.dtype("f8"), 8, (100,), (8,)), ValueError, "needs bytes"),
    (("{p}", 800, np.dtype("f8"), 0, (100,), (-8,)), ValueError, "before the file's start"),
    (("{p}", 800, np.dtype("f8"), -8, (1,), (8,)), ValueError, "offset"),
    (("{p}", 800, np.dtype("O"), 0, (1,), (8,)), TypeError, "without objects"),
    (("{p}", 800, np.dtype("f8"), 0, (0,), (8,)), ValueError, "never empty"),
    (("{p}", 800, np.dtype("f8"), 0, (2,), (8, 8)), ValueError, "one length"),
    (("{p}", 800, "f8", 0, (2,), (8,)), TypeError, "dtype"),
    ((b"{p}", 800, np.dtype("f8"), 0, (2,), (8,)), TypeError, "path"),
    (("{p}", 800, np.dtype("f8"), 0, (2**62,), (8,)), ValueError, "needs bytes"),
])
def test_crafted_regions_are_refused(tmp_path, args, error, match):
    path = str(tmp_path / "raw.bin")
    np.arange(100.0).tofile(path)
    args = tuple(a.replace("{p}", path) if isinstance(a, str) and "{p}" in a else
                 (a.replace(b"{p}", path.encode()) if isinstance(a, bytes) else a) for a in args)
    with pytest.raises(error, match=match):
        _memmap._rebuild_mapped(*args, vshape=(2,) + tuple(args[4]), mode="numpy")


def test_in_memory_sources_still_go_by_value():
    view = lazybcast.broadcast_to(np.arange(5.0), (3, 5))
    assert _memmap.reduce_by_reference(view) is None
    assert pickle.loads(pickle.dumps(view)).materialize().tolist() == [[0, 1, 2, 3, 4]] * 3


def test_dask_graph_and_token_go_by_reference(tmp_path):
    pytest.importorskip("dask")
    from dask.base import tokenize

    path = _npy(tmp_path, np.arange(300_000, dtype=np.float32).reshape(3000, 100))
    view = lazybcast.broadcast_to(np.load(path, mmap_mode="r")[:, None], (3000, 4, 100))
    x = view.to_dask(chunks=(1000, 4, 100))
    assert len(pickle.dumps(dict(x.__dask_graph__()))) < 5000  # the file is 1.2 MB
    assert tokenize(view) == tokenize(pickle.loads(pickle.dumps(view)))  # same file, region
    assert tokenize(view) != tokenize(lazybcast.broadcast_to(
        np.load(path, mmap_mode="r")[1:, None], (2999, 4, 100)))
    np.testing.assert_array_equal(x.compute(), np.broadcast_to(view.source, view.shape))
