# python.sh - the Python tools' unit tests (tests/python, stdlib unittest; pytest runs them
# too): the shared reader of result directories, tpbal-compare's logic, the numbers
# tpbal-report plots. No MPI. The report's tests skip without matplotlib.
set -u
top=${TPBAL_SRCDIR:?}
py=${TPB_PYTHON_MPL:-python3}
command -v "$py" >/dev/null 2>&1 || py=python3
export PYTHONPATH="$top/src/tools:$top/tests/python" PYTHONDONTWRITEBYTECODE=1
exec "$py" -W error::ResourceWarning -m unittest discover -s "$top/tests/python" -v
