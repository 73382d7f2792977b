//! HAR import (filled in below).
