//! Kubernetes' CEL libraries of the fake's environment, one expression at a time: the `ip`,
//! `cidr`, `url`, `quantity` and `semver` values and their members, lists, regex, sets,
//! strings and `format`, each result as the apiserver gives it.

use cel::Value;

use super::library::{compile, context};

/// What `expr` evaluates to, or its error's message.
fn eval(expr: &str) -> Result<Value, String> {
    let program = compile(expr).map_err(|e| format!("compile: {e}"))?;
    program.execute(&context()).map_err(|e| match e {
        cel::ExecutionError::FunctionError { message, .. } => message,
        other => other.to_string(),
    })
}

fn holds(expr: &str) {
    assert_eq!(eval(expr), Ok(Value::Bool(true)), "{expr}");
}

fn text(expr: &str) -> String {
    match eval(expr) {
        Ok(Value::String(s)) => s.to_string(),
        other => panic!("{expr}: {other:?}"),
    }
}

fn fails(expr: &str, message: &str) {
    assert_eq!(eval(expr), Err(message.to_owned()), "{expr}");
}

#[test]
fn ip_values_and_their_members() {
    holds("ip('10.0.0.1').family() == 4 && ip('::1').family() == 6");
    holds("ip('127.0.0.1').isLoopback() && ip('::1').isLoopback() && !ip('10.0.0.1').isLoopback()");
    holds("ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()");
    holds("ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()");
    holds("ip('169.254.1.1').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()");
    holds("ip('10.0.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()");
    holds("ip('10.0.0.1') == ip('10.0.0.1') && ip('10.0.0.1') != ip('10.0.0.2')");
    holds("ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')");
    assert_eq!(text("string(ip('2001:DB8:0:0:0::1'))"), "2001:db8::1");
    holds("isIP('10.0.0.1') && !isIP('010.0.0.1') && !isIP('::ffff:10.0.0.1')");
    fails(
        "ip('10.0.0.256')",
        "IP Address \"10.0.0.256\" parse error during conversion from string: ParseAddr(\"10.0.0.256\"): IPv4 field has value >255",
    );
    fails(
        "ip('10..0.1')",
        "IP Address \"10..0.1\" parse error during conversion from string: ParseAddr(\"10..0.1\"): IPv4 field must have at least one digit (at \".0.1\")",
    );
    fails(
        "ip('1::2::3')",
        "IP Address \"1::2::3\" parse error during conversion from string: ParseAddr(\"1::2::3\"): multiple :: in address (at \":3\")",
    );
    fails(
        "ip('12345::1')",
        "IP Address \"12345::1\" parse error during conversion from string: ParseAddr(\"12345::1\"): each group must have 4 or less digits (at \"12345::1\")",
    );
    holds("ip('1:2:3:4:5:6:1.2.3.4').family() == 6 && string(ip('::1.2.3.4')) == '::102:304'");
    fails(
        "ip('fe80::1%eth0')",
        "IP address \"fe80::1%eth0\" with zone value is not allowed",
    );
    fails(
        "ip('::ffff:10.0.0.1')",
        "IPv4-mapped IPv6 address \"::ffff:10.0.0.1\" is not allowed",
    );
}

#[test]
fn cidr_values_and_their_members() {
    holds(
        "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')) && cidr('10.0.0.0/8').containsIP('10.1.2.3')",
    );
    holds("!cidr('10.0.0.0/8').containsIP('192.168.0.1') && !cidr('10.0.0.0/8').containsIP('::1')");
    holds(
        "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')",
    );
    holds("cidr('10.1.2.3/16').prefixLength() == 16 && cidr('10.1.2.3/16').ip() == ip('10.1.2.3')");
    assert_eq!(text("string(cidr('10.1.2.3/16').masked())"), "10.1.0.0/16");
    assert_eq!(
        text("string(cidr('2001:db8::1/32').masked())"),
        "2001:db8::/32"
    );
    holds("cidr('10.0.0.0/8') == cidr('10.0.0.0/8') && cidr('10.0.0.1/8') != cidr('10.0.0.0/8')");
    holds("isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/08') && !isCIDR('10.0.0.0/33')");
    fails(
        "cidr('10.0.0.0')",
        "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"10.0.0.0\"): no '/'",
    );
    let program = compile("cidr('10.0.0.0/8').containsIP('10.0')").expect("compiles");
    assert!(
        matches!(
            program.execute(&context()),
            Err(cel::ExecutionError::NoSuchOverload(_))
        ),
        "a string that is no address is no overload, as in the apiserver"
    );
}

#[test]
fn url_values_and_their_members() {
    let u = "url('HTTP://user@Example.com:8080/p/a%2Fb?a=1&a=2&c=%41#frag')";
    assert_eq!(text(&format!("{u}.getScheme()")), "http");
    assert_eq!(text(&format!("{u}.getHost()")), "Example.com:8080");
    assert_eq!(text(&format!("{u}.getHostname()")), "Example.com");
    assert_eq!(text(&format!("{u}.getPort()")), "8080");
    assert_eq!(text(&format!("{u}.getEscapedPath()")), "/p/a%2Fb");
    holds(&format!(
        "{u}.getQuery()['a'] == ['1', '2'] && {u}.getQuery()['c'] == ['A']"
    ));
    assert_eq!(text("url('http://[::1]:80/a b').getHostname()"), "::1");
    assert_eq!(
        text("url('http://[::1]:80/a b').getEscapedPath()"),
        "/a%20b"
    );
    assert_eq!(text("url('http://h/a(b)').getEscapedPath()"), "/a(b)");
    assert_eq!(text("url('http://h/a b(').getEscapedPath()"), "/a%20b%28");
    holds("url('/a/path?x=1;y=2').getQuery().size() == 0 && url('mailto:a@b.c').getHost() == ''");
    holds("isURL('https://example.com') && !isURL('example.com')");
    fails(
        "url('x')",
        "URL parse error during conversion from string: parse \"x\": invalid URI for request",
    );
    fails(
        "url('http://exa mple.com')",
        "URL parse error during conversion from string: parse \"http://exa mple.com\": invalid character \" \" in host name",
    );
}

#[test]
fn quantity_values_and_their_members() {
    holds("quantity('1.5k').isInteger() && quantity('1.5k').asInteger() == 1500");
    holds("!quantity('500m').isInteger() && quantity('500m').asApproximateFloat() == 0.5");
    holds(
        "sign(quantity('-1.5k')) == -1 && sign(quantity('0')) == 0 && sign(quantity('2Ki')) == 1",
    );
    holds(
        "quantity('2Ki').compareTo(quantity('2048')) == 0 && quantity('1G').isGreaterThan(quantity('1Mi'))",
    );
    holds("quantity('1e3').isLessThan(quantity('1001')) && quantity('1k') == quantity('1000')");
    holds(
        "quantity('1').add(quantity('500m')) == quantity('1500m') && quantity('1').add(2) == quantity('3')",
    );
    holds(
        "quantity('1').sub(quantity('1500m')) == quantity('-500m') && quantity('1').sub(1) == quantity('0')",
    );
    holds("quantity('0.1n') == quantity('1n')");
    holds("isQuantity('+') && isQuantity('.5') && !isQuantity('1Gb') && !isQuantity('')");
    fails(
        "quantity('100m').asInteger()",
        "cannot convert value to integer",
    );
    fails("quantity('1KK')", "unable to parse quantity's suffix");
    fails(
        "quantity('1 Gi')",
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
}

#[test]
fn semver_values_and_their_members() {
    holds(
        "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3",
    );
    holds(
        "semver('1.2.3-alpha').isLessThan(semver('1.2.3')) && semver('1.2.3-1').isLessThan(semver('1.2.3-alpha'))",
    );
    holds("semver('1.2.3-alpha.2').compareTo(semver('1.2.3-alpha.10')) == -1");
    holds(
        "semver('1.2.3+a') == semver('1.2.3+b') && semver('2.0.0').isGreaterThan(semver('1.9.9'))",
    );
    holds("semver('v1.2', true) == semver('1.2.0') && semver('1.02.3', true).minor() == 2");
    holds("isSemver('1.2.3') && !isSemver('v1.2.3') && isSemver('v1.2.3', true)");
    fails("semver('1.2')", "No Major.Minor.Patch elements found");
    fails(
        "semver('01.2.3')",
        "Major number must not contain leading zeroes \"01\"",
    );
    fails(
        "semver('1.2.3-01')",
        "Numeric PreRelease version must not contain leading zeroes \"01\"",
    );
    fails(
        "semver('v1.2-beta', true)",
        "short version cannot contain PreRelease/Build meta data",
    );
}

#[test]
fn lists_regex_and_sets() {
    holds("[1, 2, 2].indexOf(2) == 1 && [1, 2, 2].lastIndexOf(2) == 2 && [1].indexOf(3) == -1");
    holds(
        "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3 && [1, 2].sum() == 3 && [1.5, 2.5].sum() == 4.0",
    );
    holds("['a', 'b'].isSorted() && ![2, 1].isSorted() && [].sum() == 0");
    fails("[].min()", "min called on empty list");
    holds("'ab12c3'.find('[0-9]+') == '12' && 'abc'.find('[0-9]') == ''");
    holds(
        "'a1b2c3'.findAll('[a-z]') == ['a', 'b', 'c'] && 'a1b2c3'.findAll('[a-z]', 2) == ['a', 'b']",
    );
    fails(
        "'x'.find('[')",
        "Illegal regex: error parsing regexp: missing closing ]: `[`",
    );
    let go = [
        ("[a[b", "missing closing ]: `[a[b`"),
        ("a[]b", "missing closing ]: `[]b`"),
        ("x(a", "missing closing ): `x(a`"),
        ("a)", "unexpected ): `a)`"),
        ("a|*", "missing argument to repetition operator: `*`"),
        ("\\\\q", "invalid escape sequence: `\\q`"),
        ("[z-a]", "invalid character class range: `z-a`"),
        ("a{2,1}", "invalid repeat count: `{2,1}`"),
        ("x\\\\", "trailing backslash at end of expression: ``"),
    ];
    for (pattern, why) in go {
        let expr = format!("'x'.find('{pattern}')");
        fails(
            &expr,
            &format!("Illegal regex: error parsing regexp: {why}"),
        );
    }
    holds("sets.contains([1, 2, 3], [2, 1]) && !sets.contains([1], [1, 2])");
    holds("sets.equivalent([1, 2], [2, 1, 1]) && !sets.equivalent([1], [1, 2])");
    holds("sets.intersects([1, 2], [2, 3]) && !sets.intersects([1], [2])");
}

#[test]
fn strings_as_the_apiserver_has_them() {
    holds(
        "'abc'.indexOf('a', 9) == -1 && 'abc'.lastIndexOf('a', 9) == -1 && 'abc'.indexOf('', 9) == 3",
    );
    holds(
        "'abc'.charAt(3) == '' && 'abcb'.lastIndexOf('b') == 3 && 'abcb'.lastIndexOf('b', 2) == 1",
    );
    holds("'a,b,c'.split(',', 2) == ['a', 'b,c'] && 'abc'.split('') == ['a', 'b', 'c']");
    holds(
        "'aaa'.replace('a', 'b', 2) == 'bba' && ' x '.trim() == 'x' && ['a', 'b'].join('-') == 'a-b'",
    );
    assert_eq!(text("strings.quote('a\"\\n')"), "\"a\\\"\\n\"");
    fails("'abc'.charAt(4)", "index out of range: 4");
    fails(
        "'abcd'.substring(3, 2)",
        "invalid substring range. start: 3, end: 2",
    );
    fails("'abc'.indexOf('a', -1)", "index out of range: -1");
}

#[test]
fn format_writes_as_the_apiserver_writes() {
    let f = |spec: &str, args: &str| text(&format!("'{spec}'.format([{args}])"));
    assert_eq!(
        f("%d|%s|%.2f|%x|%X|%o|%b", "1, 'a', 1.5, 255, 'hi', 8, 5"),
        "1|a|1.50|ff|6869|10|101"
    );
    assert_eq!(
        f("%f|%.0f|%.0f|%.2f", "1234567.891, 0.5, 2.5, 99.995"),
        "1,234,567.891000|0|2|100.00"
    );
    assert_eq!(
        f("%e|%.2e|%e", "1234567.891, -0.000012, 0.0"),
        "1.234568×10⁰⁶|-1.200000×10⁻⁰⁵|0.000000×10⁰⁰"
    );
    assert_eq!(
        f("%e|%f", "double('NaN'), double('-Infinity')"),
        "   NaN|-∞"
    );
    assert_eq!(
        f("%s|%s|%s|%s", "1e9, 0.000012, -0.0, 123.0"),
        "1e+09|1.2e-05|-0|123"
    );
    assert_eq!(
        f(
            "%s|%s",
            "[1.5, 'x', b'y', null, [true]], {'b': 1, 'a': 'x'}"
        ),
        "[1.500000, \"x\", b\"y\", null, [true]]|{\"a\":\"x\", \"b\":1}"
    );
    assert_eq!(f("100%% %s", "'x'"), "100% x");
    let err = |spec: &str| eval(&format!("'{spec}'.format([1])")).expect_err(spec);
    assert_eq!(
        err("%f"),
        "error during formatting: fixed-point clause can only be used on doubles, was given int"
    );
    assert_eq!(
        err("%q"),
        "could not parse formatting clause: unrecognized formatting clause \"q\""
    );
    assert_eq!(err("%d%d"), "index 1 out of range");
    assert_eq!(err("%"), "unexpected end of string");
    let long = eval("'%.10001f'.format([1.5])").expect_err("over budget");
    assert_eq!(
        long,
        "error during formatting: operation cancelled: actual cost limit exceeded"
    );
    assert_eq!(f("%.12f", "1.5"), "1.500000000000");
}
