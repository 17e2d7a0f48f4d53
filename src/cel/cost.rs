//! The arithmetic of the cost model, shared by the static estimator (ranges: the CRD is
//! rejected when the worst case exceeds a limit) and the library functions' own estimates.
//!
//! Follows cel-go's `checker/cost.go`: sizes and costs saturate instead of overflowing, factors
//! round up.

/// Cost of traversing one character of a string or byte of bytes (`common.StringTraversalCostFactor`).
pub const STRING_TRAVERSAL: f64 = 0.1;
/// Cost of one character of a regular expression (`common.RegexStringLengthCostFactor`).
pub const REGEX_LENGTH: f64 = 0.25;

/// A range of sizes (string length, list/map elements).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    /// Smallest.
    pub min: u64,
    /// Largest.
    pub max: u64,
}

/// An unknown size: anything up to `u64::MAX`.
pub const UNKNOWN: Size = Size {
    min: 0,
    max: u64::MAX,
};

impl Size {
    /// A size known exactly (a literal's).
    pub fn exact(n: u64) -> Size {
        Size { min: n, max: n }
    }

    /// The size of a concatenation.
    pub fn add(self, o: Size) -> Size {
        Size {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    /// The size of a product (elements of elements).
    pub fn mul(self, o: Size) -> Size {
        Size {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    /// The cost of visiting every unit at `f` each.
    pub fn factor(self, f: f64) -> Cost {
        Cost {
            min: mul_f(self.min, f),
            max: mul_f(self.max, f),
        }
    }

    /// The cost of visiting every unit once (a loop over the elements).
    pub fn as_cost(self) -> Cost {
        Cost {
            min: self.min,
            max: self.max,
        }
    }
}

/// `ceil(n * f)` saturating at `u64::MAX`, as cel-go's `MultiplyByCostFactor`.
pub fn mul_f(n: u64, f: f64) -> u64 {
    let r = (n as f64 * f).ceil();
    if r >= u64::MAX as f64 {
        u64::MAX
    } else {
        r as u64
    }
}

/// A range of costs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cost {
    /// Cheapest.
    pub min: u64,
    /// Most expensive.
    pub max: u64,
}

impl Cost {
    /// The cost of one step (an identifier, a field selection, a simple call).
    pub fn one() -> Cost {
        Cost::exact(1)
    }

    /// A cost known exactly.
    pub fn exact(n: u64) -> Cost {
        Cost { min: n, max: n }
    }

    /// Both costs, one after the other.
    pub fn add(self, o: Cost) -> Cost {
        Cost {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    /// `self` repeated `o` times.
    pub fn mul(self, o: Cost) -> Cost {
        Cost {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }
}
