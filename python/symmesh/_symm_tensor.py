"""Tensors of symmesh.symm_mem: dtypes by name (torch.dtype accepted, torch not needed) and
contiguous row-major views of one buffer on one rank, enough to name the bytes a one-sided
call moves (t[i], t[a:b], t.chunk(n), t.view(...)) and to copy one into another (t.copy_)."""

from ._symm_errors import scenario_error, unsupported_error

# Element sizes by canonical name, and the other names each is known by (torch's among them:
# str(torch.bfloat16) is "torch.bfloat16").
_SIZES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp64": 8, "fp8_e4m3": 1, "fp8_e5m2": 1,
          "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8, "bool": 1}
_ALIASES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
            "float": "fp32", "float64": "fp64", "double": "fp64", "fp8": "fp8_e4m3",
            "float8_e4m3fn": "fp8_e4m3", "e4m3": "fp8_e4m3", "float8_e5m2": "fp8_e5m2",
            "e5m2": "fp8_e5m2", "short": "int16", "int": "int32", "long": "int64"}


def dtype_name(dtype, where, rank=None):
    """The canonical name of `dtype` ("bf16", "fp32", ...): a name, an alias, or a
    torch.dtype. None is torch's default, float32."""
    if dtype is None:
        return "fp32"
    text = str(dtype)
    if type(dtype).__module__.startswith("torch") and text.startswith("torch."):
        text = text[len("torch."):]
    if not isinstance(dtype, str) and not text.isidentifier():
        raise scenario_error(f"dtype must be a name like 'bf16' or a torch.dtype, not {dtype!r}",
                             where, rank)
    name = _ALIASES.get(text, text)
    if name not in _SIZES:
        raise scenario_error(f"unknown dtype '{text}' (known: {', '.join(_SIZES)}, and "
                             f"{', '.join(_ALIASES)})", where, rank)
    return name


def itemsize(name):
    return _SIZES[name]


def shape_of(size, where, rank=None):
    """torch.empty's size arguments: empty(2, 3) or empty((2, 3)) or empty([2, 3])."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = []
    for d in size:
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise scenario_error(f"a size must be a list of integers >= 0, got {size!r}", where,
                                 rank)
        shape.append(d)
    return tuple(shape)


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Allocation:
    """One buffer of one rank: local (a Program buffer from the start) or symmetric (one when
    its rendezvous makes every member's copy; until then `id` is None)."""

    __slots__ = ("rank", "symmetric", "nbytes", "id", "group", "index")

    def __init__(self, rank, symmetric, nbytes, buffer_id=None, index=None):
        self.rank, self.symmetric, self.nbytes = rank, symmetric, nbytes
        self.id, self.group, self.index = buffer_id, None, index


class Tensor:
    """A contiguous row-major view of one buffer on one rank. It holds no values: the
    simulator moves sizes and times, not data."""

    __slots__ = ("_alloc", "_context", "offset", "shape", "dtype")

    def __init__(self, context, alloc, offset, shape, dtype):
        self._context, self._alloc = context, alloc
        self.offset, self.shape, self.dtype = offset, tuple(shape), dtype

    # -- what torch users ask of a tensor
    @property
    def rank(self):
        return self._alloc.rank

    @property
    def is_symmetric(self):
        return self._alloc.symmetric

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    def numel(self):
        return _numel(self.shape)

    def element_size(self):
        return itemsize(self.dtype)

    @property
    def nbytes(self):
        return self.numel() * self.element_size()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        kind = "symmetric" if self.is_symmetric else "local"
        return (f"<symm_mem.Tensor rank {self.rank} {kind} shape {list(self.shape)} "
                f"{self.dtype} at byte {self.offset}>")

    # -- views (contiguous only)
    def _row(self):
        return _numel(self.shape[1:]) * self.element_size()

    def __getitem__(self, index):
        where = "Tensor[...]"
        if not self.shape:
            raise scenario_error("a 0-d tensor cannot be indexed", where, self.rank)
        n = self.shape[0]
        if isinstance(index, int) and not isinstance(index, bool):
            i = index + n if index < 0 else index
            if not 0 <= i < n:
                raise scenario_error(f"index {index} is out of range for dim 0 of size {n}",
                                     where, self.rank)
            return Tensor(self._context, self._alloc, self.offset + i * self._row(),
                          self.shape[1:], self.dtype)
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step != 1:
                raise unsupported_error("only contiguous slices (step 1) of dim 0 are views "
                                        "here", where, self.rank)
            count = max(0, stop - start)
            return Tensor(self._context, self._alloc, self.offset + start * self._row(),
                          (count,) + self.shape[1:], self.dtype)
        raise unsupported_error(f"index {index!r}: only an int or a slice of dim 0",
                                where, self.rank)

    def chunk(self, chunks, dim=0):
        """torch.chunk along dim 0: pieces of ceil(n / chunks) rows, the last smaller."""
        if dim != 0:
            raise unsupported_error("only dim 0 chunks are contiguous views", "Tensor.chunk",
                                    self.rank)
        if not isinstance(chunks, int) or chunks < 1:
            raise scenario_error(f"chunks must be an int >= 1, got {chunks!r}", "Tensor.chunk",
                                 self.rank)
        n = len(self)
        step = -(-n // chunks)
        return tuple(self[i:i + step] for i in range(0, n, step)) if n else (self,)

    def view(self, *shape):
        shape = shape_of(shape, "Tensor.view", self.rank)
        if _numel(shape) != self.numel():
            raise scenario_error(f"shape {list(shape)} is invalid for {self.numel()} elements",
                                 "Tensor.view", self.rank)
        return Tensor(self._context, self._alloc, self.offset, shape, self.dtype)

    def flatten(self):
        return self.view(self.numel())

    def copy_(self, src):
        """Copies `src` (same dtype and element count, same rank) into this tensor, on the
        current stream: a local copy (HBM-bound, core/roofline.hpp)."""
        self._context.copy(self, src)
        return self
