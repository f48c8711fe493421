"""A software prefetch of one vertex record, for the MSF engine's kernels (``_msf_kernels``).

The AM-tree's inserts are bound by the first read of each endpoint's record:
on a 10M-edge R-MAT stream the 556K records (32 bytes each, 17.8 MB) outgrow
the 4 MB L2 cache, so each endpoint costs a miss before any of the walks can
start, and the walks are dependent loads, so nothing overlaps it.  The
stream's next endpoints are known, though: ``prefetch_record(V, x)`` asks for
``V[x]``'s cache line (LLVM's ``llvm.prefetch``, read, keep in all levels) a
few edges ahead, so its miss overlaps the current edge's work.  A prefetch is
only a hint: it never faults and changes no state, so a vertex id whose record
moves or changes before it is used costs nothing but the wasted load.

numba has no prefetch of its own, so this is a numba ``intrinsic`` emitting
the LLVM call; with ``NUMBA_DISABLE_JIT=1`` (the coverage lane) it is a plain
function that does nothing.
"""
from __future__ import annotations

from numba.core import config

if config.DISABLE_JIT:
    def prefetch_record(V, x):
        """No-op outside compiled code (a prefetch changes no state)."""
        return None
else:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch_record(typingctx, V, x):
        """Prefetch the cache line of ``V[x, 0]`` (``V`` a C-contiguous 2-d array,
        ``x`` an integer in range; no bounds check: a prefetch cannot fault)."""
        if not (isinstance(V, types.Array) and V.ndim == 2 and isinstance(x, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            aryty, xty = sig.args
            ary = context.make_array(aryty)(context, builder, args[0])
            row = context.cast(builder, args[1], xty, types.intp)
            ptr = cgutils.get_item_pointer2(
                context, builder, ary.data, cgutils.unpack_tuple(builder, ary.shape),
                cgutils.unpack_tuple(builder, ary.strides), aryty.layout,
                [row, context.get_constant(types.intp, 0)], wraparound=False,
                boundscheck=False)
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
            # read (0), locality 3 (keep in every cache level), data cache (1)
            builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()
        return types.void(V, x), codegen
