"""A software prefetch for the compiled corpus kernel: ask the cache for a row's points before they are read.

The pruned path (:mod:`stumpcheck.numerics.corpus.kernel_pruned`) reads each sorted task once, in a few
short runs (its groups' windows) that the hardware prefetcher has no time to detect, so every run
would start with a wait on main memory. While it computes task j it names the cache lines of
task j + 2's best points and windows (:func:`prefetch`), so that they arrive during the arithmetic
of the tasks before. A
prefetch is a hint: it changes no value, and a prefetch of a line that is not needed costs only
bandwidth.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["prefetch"]


@intrinsic
def prefetch(typingctx, array, index):
    """Hint that array[index] (a 1-d array, 0 ≤ index < len(array)) will be read soon (LLVM's
    ``llvm.prefetch``: read, high temporal locality, data cache)."""
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic("llvm.prefetch", fnty=ir.FunctionType(
            ir.VoidType(), [byte_pointer, i32, i32, i32]))
        address = builder.bitcast(builder.gep(data, [args[1]]), byte_pointer)
        builder.call(fn, [address, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(array, types.intp), codegen
