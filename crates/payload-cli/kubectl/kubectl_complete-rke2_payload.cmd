@echo off
rem Completion of `kubectl rke2-payload ...` on Windows (kubectl 1.26 or newer): put this file
rem in a folder on the PATH; see kubectl_complete-rke2_payload beside it.
kubectl-rke2_payload.exe __complete %*
