"""The bundled example data sets (``ambppl/examples``)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["example_path"]


def example_path(name: str = "weather_sentiment") -> Path:
    """Path of a bundled example data set.

    Parameters
    ----------
    name : str
        The data set's name; ``"weather_sentiment"`` is bundled (200 tweets x 20 crowd
        labels, columns ``task, worker, label``, can't-solve label ``"I can't tell"``).

    Returns
    -------
    pathlib.Path
        The CSV file inside the installed package.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the bundled ones).

    Notes
    -----
    The origin and licence of each set are in ``ambppl/examples/README.md``.

    References
    ----------
    CrowdFlower "Data for Everyone", weather sentiment, via snorkel-team/snorkel
    ``tutorials/crowdsourcing/data/weather-non-agg-DFE.csv``.

    Examples
    --------
    >>> example_path("weather_sentiment").name
    'weather_sentiment.csv'
    """
    from importlib import resources

    folder = Path(str(resources.files("ambppl").joinpath("examples")))
    available = sorted(p.stem for p in folder.glob("*.csv"))
    if name not in available:
        raise ValueError(f"name must be one of {available!r}, but got {name!r}")
    return folder / f"{name}.csv"
