"""Inference: the ``fit`` dispatcher, its routes, the model catalog, modelling helpers and
convergence diagnostics.

Takes data objects from ``ambppl.data``, returns ``xarray.DataTree`` results that
``ambppl.analysis``, ``ambppl.validation`` and ``ambppl.report`` read.
"""

from ambppl.inference.catalog import (
    ENV_VAR,
    INFO_KEYS,
    ROUTE_FUNCTIONS,
    ModelEntry,
    catalog_dir,
    get_model,
    list_models,
    model_parameters,
    parameter_owners,
    read_record,
)
from ambppl.inference.convergence import (
    CONVERGENCE,
    ConvergenceWarning,
    check_convergence,
    convergence_advice,
    convergence_message,
    describe_parameter,
    stored_record,
    worst_parameters,
)
from ambppl.inference.diagnostics import (
    BLOCK_ELEMENTS,
    N_THREADS,
    diagnose,
    ess_bulk,
    ess_mean,
    ess_tail,
    mcse_mean,
    rhat,
)
from ambppl.inference.fitting import (
    fit,
)
from ambppl.inference.modeling import (
    CountStatistics,
    add_annotation_data,
    add_measures,
    count_statistics,
    count_values,
    dirichlet_multinomial_logp,
    log_likelihood,
    log_pochhammer_excess,
    model_coords,
    prior_concentration,
)

__all__ = [
    "BLOCK_ELEMENTS",
    "CONVERGENCE",
    "ENV_VAR",
    "INFO_KEYS",
    "N_THREADS",
    "ROUTE_FUNCTIONS",
    "ConvergenceWarning",
    "CountStatistics",
    "ModelEntry",
    "add_annotation_data",
    "add_measures",
    "catalog_dir",
    "check_convergence",
    "convergence_advice",
    "convergence_message",
    "count_statistics",
    "count_values",
    "describe_parameter",
    "diagnose",
    "dirichlet_multinomial_logp",
    "ess_bulk",
    "ess_mean",
    "ess_tail",
    "fit",
    "get_model",
    "list_models",
    "log_likelihood",
    "log_pochhammer_excess",
    "mcse_mean",
    "model_coords",
    "model_parameters",
    "parameter_owners",
    "prior_concentration",
    "read_record",
    "rhat",
    "stored_record",
    "worst_parameters",
]
