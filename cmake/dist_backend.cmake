# dist_backend_option(<name> <found> <package>): the option DIST_WITH_<NAME> of a backend folder,
# on by default when its engine's library was found (<found> true); asking for it without the
# library stops the configure step, naming the Debian <package> to install.
function(dist_backend_option name found package)
  string(TOUPPER "${name}" upper)
  set(default OFF)
  if(${found})
    set(default ON)
  endif()
  option(DIST_WITH_${upper} "Build the ${name} backend" ${default})
  if(DIST_WITH_${upper} AND NOT ${found})
    message(FATAL_ERROR "DIST_WITH_${upper} is ON but its library was not found: install ${package}")
  endif()
endfunction()
