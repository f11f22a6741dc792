"""LLVM intrinsics that Numba does not expose.

``float_from_bits(bits)`` reads the 64 bits of an integer as a float64 (a bit cast, no
conversion): it builds the power of two 2**n from its exponent bits in the vectorized exp of
``objective.py``; ``bits_from_float(value)``, its inverse, splits a float into exponent and
mantissa in the vectorized log there.

``prefetch(array, index)`` asks the CPU to start loading ``array[index]`` into cache.  The
histogram kernels ask for the binned row and the statistics of a node's i+16-th row while they
add the i-th one: a node's rows are scattered over the binned matrix and the statistics, and
without the hint every row costs cache misses that the hardware prefetcher cannot predict
(on the one-hot benchmark set, hinting the statistics too took a tree's cold-cache children
histograms from 28 to 19 ms).  It has no effect on any result.

``add_pair(array, index, first, second)`` adds two floats to two adjacent float64 cells with one
vector load, add and store.  A one-output histogram bin is a (gradient, count) pair; LLVM does not
merge the two scalar updates itself, and the pair saves 5-10 % of a row-wise histogram (measured on
the one-hot benchmark set).

``popcount(word)`` counts the set bits of a 64-bit unsigned integer (one instruction where the CPU has
it): the row index of a sparse feature (kernels/store.py) finds a row's entry by the bits below it.
"""
import numpy as np
from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, array, index):
    """Hint: array[index] will be read soon (a 1-D array, an integer index)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and isinstance(index, types.Integer)):
        return None
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        ary = context.make_array(array_type)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, array_type, ary, [args[1]],
                                       wraparound=False, boundscheck=False)
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # read access, high temporal locality, data cache
        builder.call(fn, [builder.bitcast(ptr, byte_ptr), ir.Constant(i32, 0), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def add_pair(typingctx, array, index, first, second):
    """array[index] += first and array[index + 1] += second, as one two-lane vector load, add and
    store (a 1-D float64 array, an integer index, two floats)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.float64
            and isinstance(index, types.Integer)):
        return None
    sig = types.void(array, index, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        ary = context.make_array(array_type)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, array_type, ary, [args[1]],
                                       wraparound=False, boundscheck=False)
        pair = ir.VectorType(ir.DoubleType(), 2)
        pair_ptr = builder.bitcast(ptr, pair.as_pointer())
        addend = ir.Constant(pair, ir.Undefined)
        for lane, value in enumerate(args[2:]):
            addend = builder.insert_element(addend, value, ir.Constant(ir.IntType(32), lane))
        builder.store(builder.fadd(builder.load(pair_ptr, align=8), addend), pair_ptr, align=8)
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def float_from_bits(typingctx, bits):
    """The float64 whose IEEE-754 bits are those of the 64-bit integer ``bits``."""
    if not (isinstance(bits, types.Integer) and bits.bitwidth == 64):
        return None
    sig = types.float64(bits)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return sig, codegen


@intrinsic
def bits_from_float(typingctx, value):
    """The IEEE-754 bits of the float64 ``value`` as a 64-bit integer (float_from_bits' inverse)."""
    if value != types.float64:
        return None
    sig = types.int64(value)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return sig, codegen


@intrinsic
def popcount(typingctx, word):
    """The number of set bits of the 64-bit unsigned integer ``word``, as a uint64."""
    if not (isinstance(word, types.Integer) and word.bitwidth == 64 and not word.signed):
        return None
    sig = types.uint64(word)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, [args[0]])
    return sig, codegen


if config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1 (the pure-Python kernel tests): plain-Python stand-ins
    def prefetch(array, index):  # noqa: F811 - the interpreted stand-in for the intrinsic
        """No-op: without compilation there is no cache hint to give."""
        return None

    def add_pair(array, index, first, second):  # noqa: F811 - the interpreted stand-in for the intrinsic
        """array[index] += first; array[index + 1] += second."""
        array[index] += first
        array[index + 1] += second

    def float_from_bits(bits):  # noqa: F811 - the interpreted stand-in for the intrinsic
        """The float64 whose IEEE-754 bits are those of the 64-bit integer ``bits``."""
        return np.int64(bits).view(np.float64)

    def bits_from_float(value):  # noqa: F811 - the interpreted stand-in for the intrinsic
        """The IEEE-754 bits of the float64 ``value`` as a 64-bit integer."""
        return np.float64(value).view(np.int64)

    def popcount(word):  # noqa: F811 - the interpreted stand-in for the intrinsic
        """The number of set bits of the 64-bit unsigned integer ``word``, as a uint64."""
        return np.uint64(bin(int(word)).count("1"))
