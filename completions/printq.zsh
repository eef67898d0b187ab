
#compdef printq

_printq_completion() {
  eval $(env _TYPER_COMPLETE_ARGS="${words[1,$CURRENT]}" _PRINTQ_COMPLETE=complete_zsh printq)
}

compdef _printq_completion printq

