#!/usr/bin/env bash
# The chart's checks (deploy/test) render it with deploy/render, a Go program using
# text/template and Sprig as Helm does: no Helm binary is reachable from our machines,
# Debian's Go and Sprig are. Installs them when missing. Sourced by scripts/test.sh.
chart_tools_missing() {
  ! command -v go >/dev/null 2>&1 ||
    [ ! -d /usr/share/gocode/src/github.com/Masterminds/sprig ] ||
    [ ! -d /usr/share/gocode/src/gopkg.in/yaml.v2 ]
}
if chart_tools_missing; then
  echo "[chart-tools] installing Debian's golang-go, Sprig and yaml.v2 (to render the Helm chart in its tests)" >&2
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo -n); fi
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v2-dev >&2 ||
    {
      "${sudo_cmd[@]}" apt-get update -q >&2 &&
        "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
          golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v2-dev >&2
    } ||
    echo "[chart-tools] could not install them: the chart's tests will fail" >&2
fi
