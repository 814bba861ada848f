{{/* One source of truth: the Soldiers the chart runs are the config's
domains. The chart reads config.hcl with a small scanner of HCL's tokens
(strings, comments, heredocs, braces, identifiers), enough to find the
top-level domain blocks and the mode attributes of the soldier and domain
blocks; `regiment validate` checks everything else. */}}

{{/* regiment.hclDomains: the config's domains, as JSON
{"names": [...], "modes": {name: mode}, "soldierMode": mode}, modes "" where
the block sets none. Fails on unbalanced braces. */}}
{{- define "regiment.hclDomains" -}}
{{- $re := `"(?:[^"\\\n]|\\.)*"|#[^\n]*|//[^\n]*|/\*(?s:.*?)\*/|<<-?[A-Za-z_][A-Za-z0-9_]*\n(?s:.*?)\n[ \t]*[A-Za-z_][A-Za-z0-9_]*(?:\n|$)|[{}=]|[A-Za-z_][A-Za-z0-9_-]*` -}}
{{- $depth := 0 -}}
{{- $head := list -}}
{{- $block := "" -}}
{{- $label := "" -}}
{{- $prev := "" -}}
{{- $prev2 := "" -}}
{{- $names := list -}}
{{- $modes := dict -}}
{{- $soldierMode := "" -}}
{{- range $tok := regexFindAll $re .Values.config.hcl -1 -}}
{{- if or (hasPrefix "#" $tok) (hasPrefix "//" $tok) (hasPrefix "/*" $tok) -}}
{{- /* a comment: not a token */ -}}
{{- else -}}
{{- if eq $tok "{" -}}
{{- if eq $depth 0 -}}
{{- $block = first (default (list "") $head) -}}
{{- $label = "" -}}
{{- if gt (len $head) 1 -}}{{- $label = index $head 1 | trimPrefix "\"" | trimSuffix "\"" -}}{{- end -}}
{{- if eq $block "domain" -}}
{{- $names = append $names $label -}}
{{- $_ := set $modes $label "" -}}
{{- end -}}
{{- end -}}
{{- $depth = add1 $depth -}}
{{- else if eq $tok "}" -}}
{{- $depth = sub $depth 1 -}}
{{- if lt $depth 0 -}}
{{- fail "config.hcl: a } closes no block (regiment validate --config locates it)" -}}
{{- end -}}
{{- if eq $depth 0 -}}
{{- $block = "" -}}
{{- $head = list -}}
{{- end -}}
{{- else if eq $depth 0 -}}
{{- if hasPrefix "\"" $tok -}}
{{- $head = append $head $tok -}}
{{- else if regexMatch `^[A-Za-z_]` $tok -}}
{{- $head = list $tok -}}
{{- end -}}
{{- else if and (eq $depth 1) (eq $prev "=") (eq $prev2 "mode") (hasPrefix "\"" $tok) -}}
{{- $mode := $tok | trimPrefix "\"" | trimSuffix "\"" -}}
{{- if eq $block "domain" -}}
{{- $_ := set $modes $label $mode -}}
{{- else if eq $block "soldier" -}}
{{- $soldierMode = $mode -}}
{{- end -}}
{{- end -}}
{{- $prev2 = $prev -}}
{{- $prev = $tok -}}
{{- end -}}
{{- end -}}
{{- if ne $depth 0 -}}
{{- fail "config.hcl: a block is not closed (regiment validate --config locates it)" -}}
{{- end -}}
{{- dict "names" $names "modes" $modes "soldierMode" $soldierMode | toJson -}}
{{- end -}}

{{/* regiment.domains: the Soldiers to run, as JSON {"domains": [...]}: each
entry of .Values.domains with "mode", the mode its Soldier runs in. With
config.hcl, the domain blocks and .Values.domains must name the same
domains (rendering fails naming the first one that differs), and a domain's
mode is its block's, else the soldier block's, else "active" (the
daemons' default). With config.existingConfigMap the chart cannot read the
config: a domain's mode is domains[].mode (default "recommend"). */}}
{{- define "regiment.domains" -}}
{{- $out := list -}}
{{- if .Values.config.existingConfigMap -}}
{{- range $d := .Values.domains -}}
{{- $out = append $out (merge (dict "mode" (default "recommend" $d.mode)) $d) -}}
{{- end -}}
{{- else -}}
{{- $_ := required "config.hcl or config.existingConfigMap is required" .Values.config.hcl -}}
{{- $hcl := include "regiment.hclDomains" . | fromJson -}}
{{- $values := dict -}}
{{- range $d := .Values.domains -}}
{{- $_ := set $values (toString $d.name) true -}}
{{- if not (has $d.name $hcl.names) -}}
{{- fail (printf "domain %q is in the values' domains but config.hcl has no domain %q block: its Soldier would run a domain the config does not have (remove it from domains, or add the block)" $d.name $d.name) -}}
{{- end -}}
{{- end -}}
{{- range $name := $hcl.names -}}
{{- if not (hasKey $values $name) -}}
{{- fail (printf "domain %q of config.hcl has no entry in the values' domains: it would get no Soldier (add {name: %s, namespaces: [...]} to domains)" $name $name) -}}
{{- end -}}
{{- end -}}
{{- range $d := .Values.domains -}}
{{- $mode := default (default "active" $hcl.soldierMode) (get $hcl.modes $d.name) -}}
{{- if and $d.mode (ne $d.mode $mode) -}}
{{- fail (printf "domain %q: domains[].mode is %q but config.hcl says %q; with config.hcl the config's mode is the one (remove domains[].mode)" $d.name $d.mode $mode) -}}
{{- end -}}
{{- $out = append $out (merge (dict "mode" $mode) $d) -}}
{{- end -}}
{{- end -}}
{{- dict "domains" $out | toJson -}}
{{- end -}}

{{/* regiment.writes: whether a Soldier in mode (a string) writes HPAs or
workloads: in active mode it actuates, in off it gives the apps back; in
recommend (and shadow, its alias) it writes nothing. */}}
{{- define "regiment.writes" -}}
{{- if or (eq . "recommend") (eq . "shadow") -}}{{- else -}}true{{- end -}}
{{- end -}}
