# ---- the ${title} kernel and this job's values, exactly as neffbench ${version} built them ----

#: ${kernel_source}


# ---- the module the job compiled ----

#: ${module_source}
