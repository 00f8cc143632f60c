# Sourced by the Makefile and the scripts under .ci/ (POSIX sh).

# Whether this runs in CI: CI is 1, true or yes, in any case (CI=YES too). tests/support/ci.py
# says the same for the tests.
in_ci() {
  case "$(printf '%s' "${CI:-}" | tr '[:upper:]' '[:lower:]')" in
    1 | true | yes) return 0 ;;
    *) return 1 ;;
  esac
}
