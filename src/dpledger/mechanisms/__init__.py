"""Primitive mechanisms: noise, selection, histograms, partitions and subsamples.

Every released value is float-safe by default: ``DiscreteLaplace`` for integer queries, and for
real queries ``Laplace``, ``TruncatedLaplace`` and ``Gaussian`` on a power-of-two lattice with exact
integer noise. Textbook floating-point noise is an explicit opt-in (``textbook``).
"""

from .base import Mechanism
from .discrete import DiscreteLaplace
from .gaussian import Gaussian
from .histogram import Histogram, HistogramLearner
from .laplace import Laplace, TruncatedLaplace
from .lattice import Lattice
from .partition import EdgeSplit, PoissonSample, RowSplit, SampleWithoutReplacement
from .selection import Exponential, ReportNoisyMax, TopKPeeling
from ..privacy.analytic import analytic_delta, analytic_sigma, classic_sigma
from .textbook import TextbookGaussian, TextbookLaplace, TextbookTruncatedLaplace

__all__ = [
    "DiscreteLaplace", "EdgeSplit", "Exponential", "Gaussian", "Histogram", "HistogramLearner", "Laplace", "Lattice",
    "Mechanism", "PoissonSample", "ReportNoisyMax", "RowSplit", "SampleWithoutReplacement", "TextbookGaussian",
    "TextbookLaplace", "TextbookTruncatedLaplace", "TopKPeeling", "TruncatedLaplace", "analytic_delta",
    "analytic_sigma", "classic_sigma",
]
