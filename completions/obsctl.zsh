
#compdef obsctl

_obsctl_completion() {
  eval $(env _TYPER_COMPLETE_ARGS="${words[1,$CURRENT]}" _OBSCTL_COMPLETE=complete_zsh obsctl)
}

compdef _obsctl_completion obsctl

