"""A software prefetch for numba kernels (``llvm.prefetch``, read, high locality).

Shared by the kernels whose per-item work touches a few cache lines chosen by
the data, in tables that outgrow the caches:

- SWOOP (simjoin): the index list rows of the new set's tokens and of the
  expiring set's tokens, and the tail of each list in the arena.  At |W| = 1e4
  on the TWEET-like stream these are the kernel's main cache misses (a perf
  profile of ``run_ops``); asking for them one set ahead, or all at once
  before the scans, overlaps the misses.
- BIC (connectivity): the vertex rows of the edges a few positions ahead and
  of their union-find parents, in the forward insert loop and the backward
  build; each find is a chain of dependent misses on a 1M-vertex stream.
- the simjoin spec's token numbering (``spec._simjoin_tokens``): the direct
  table's entry of the token some positions ahead.

It lives in the spec layer because the spec uses it; ``streamspec.engines._prefetch``
re-exports it for the engines' kernels.

A prefetch never faults and changes no result.
"""
from __future__ import annotations

from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic


def _codegen(row):
    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        index = [idx, context.get_constant(types.intp, 0)] if row else [idx]
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, index, wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return codegen


@intrinsic
def prefetch(typingctx, arr, idx):
    """Ask for the cache line of ``arr[idx]`` (1-d, ``0 <= idx < arr.size``)."""
    return types.void(arr, idx), _codegen(False)


@intrinsic
def prefetch_row(typingctx, arr, row):
    """Ask for the cache line of ``arr[row, 0]`` (2-d, ``0 <= row < arr.shape[0]``)."""
    return types.void(arr, row), _codegen(True)


if config.DISABLE_JIT:          # the NUMBA_DISABLE_JIT lane runs the kernels as Python
    def prefetch(arr, idx):     # noqa: F811
        """No-op without the JIT."""

    def prefetch_row(arr, row):  # noqa: F811
        """No-op without the JIT."""
