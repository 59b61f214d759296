"""Primitive mechanisms (DESIGN §5): noise, selection, histograms, partitions and subsamples."""

from .base import Mechanism
from .discrete import DiscreteLaplace, SnappingLaplace
from .gaussian import Gaussian, analytic_delta, analytic_sigma, classic_sigma
from .histogram import Histogram, HistogramLearner
from .laplace import Laplace, TruncatedLaplace
from .partition import EdgeSplit, PoissonSample, RowSplit, SampleWithoutReplacement
from .selection import Exponential, ReportNoisyMax, TopKPeeling

__all__ = [
    "DiscreteLaplace", "EdgeSplit", "Exponential", "Gaussian", "Histogram", "HistogramLearner", "Laplace", "Mechanism",
    "PoissonSample", "ReportNoisyMax", "RowSplit", "SampleWithoutReplacement", "SnappingLaplace", "TopKPeeling",
    "TruncatedLaplace", "analytic_delta", "analytic_sigma", "classic_sigma",
]
