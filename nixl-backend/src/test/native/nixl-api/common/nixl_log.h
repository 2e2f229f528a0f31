// Include path the TCPX plugin uses; the declarations are in nixl_api_surface.h.
#include "../nixl_api_surface.h"
