//! The toolkit against finite differences, hand-computed losses and seeded reproducibility.

use super::*;

/// A random matrix from a seed.
pub(crate) fn rand_matrix(n: usize, m: usize, seed: u64) -> Array2<f32> {
    let mut r = SplitMix64::new(seed);
    Array2::from_shape_fn((n, m), |_| r.normal() as f32)
}

/// Central finite difference of `f` with respect to element `i` of a flat buffer.
fn numeric(f: &mut dyn FnMut(f32) -> f64, at: f32, h: f32) -> f64 {
    (f(at + h) - f(at - h)) / (2.0 * f64::from(h))
}

fn close(a: f64, b: f64, what: &str) {
    let tol = 2e-2 * a.abs().max(b.abs()).max(1e-2);
    assert!((a - b).abs() <= tol, "{what}: analytic {a} vs numeric {b}");
}

/// Fixed random weights on the outputs, so that the scalar loss depends on every output
/// unevenly (a plain sum would hide batch-norm's input gradient, which sums to zero).
fn weighted_sum(y: &Array2<f32>, c: &Array2<f32>) -> f64 {
    y.iter()
        .zip(c)
        .map(|(a, b)| f64::from(*a) * f64::from(*b))
        .sum()
}

#[test]
fn linear_gradients_match_finite_differences() {
    let mut rng = SplitMix64::new(1);
    let mut lin = Linear::new(5, 3, true, Init::Xavier, &mut rng);
    let x = rand_matrix(4, 5, 2);
    let c = rand_matrix(4, 3, 3);
    let y = lin.forward(x.view());
    assert_eq!(y.dim(), (4, 3));
    let dx = lin.backward(c.view(), true).unwrap();
    for i in [0, 7, 14] {
        let base = lin.clone();
        let mut f = |v: f32| {
            let mut l = base.clone();
            l.weight.value[i] = v;
            weighted_sum(&l.apply(x.view()), &c)
        };
        let num = numeric(&mut f, base.weight.value[i], 1e-2);
        close(f64::from(lin.weight.grad[i]), num, "dW");
    }
    let bgrad = lin.bias.as_ref().unwrap().grad.clone();
    for (j, &g) in bgrad.iter().enumerate() {
        let want: f32 = c.column(j).sum();
        close(f64::from(g), f64::from(want), "db");
    }
    for (r, col) in [(0, 0), (3, 4), (2, 2)] {
        let mut f = |v: f32| {
            let mut xx = x.clone();
            xx[[r, col]] = v;
            weighted_sum(&lin.apply(xx.view()), &c)
        };
        let num = numeric(&mut f, x[[r, col]], 1e-2);
        close(f64::from(dx[[r, col]]), num, "dx");
    }
}

#[test]
fn batchnorm_gradients_match_finite_differences_and_modes_differ() {
    let mut bn = BatchNorm1d::new(3);
    bn.gamma.value = vec![1.5, 0.5, -1.0];
    bn.beta.value = vec![0.1, -0.2, 0.3];
    let x = rand_matrix(6, 3, 5);
    let c = rand_matrix(6, 3, 6);
    let y = bn.forward(x.view());
    // Train mode output has zero mean and (before gamma/beta) unit variance per column.
    for j in 0..3 {
        let col: Vec<f64> = y
            .column(j)
            .iter()
            .map(|&v| (f64::from(v) - f64::from(bn.beta.value[j])) / f64::from(bn.gamma.value[j]))
            .collect();
        let m = col.iter().sum::<f64>() / 6.0;
        let v = col.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / 6.0;
        assert!(m.abs() < 1e-5 && (v - 1.0).abs() < 1e-3, "col {j}: {m} {v}");
    }
    let dx = bn.backward(c.view());
    let fresh = BatchNorm1d {
        gamma: bn.gamma.clone(),
        beta: bn.beta.clone(),
        ..BatchNorm1d::new(3)
    };
    for (r, col) in [(0, 0), (2, 1), (5, 2), (3, 0)] {
        let mut f = |v: f32| {
            let mut b = fresh.clone();
            let mut xx = x.clone();
            xx[[r, col]] = v;
            weighted_sum(&b.forward(xx.view()), &c)
        };
        let num = numeric(&mut f, x[[r, col]], 1e-2);
        close(f64::from(dx[[r, col]]), num, "BN dx");
    }
    for j in 0..3 {
        let mut f = |v: f32| {
            let mut b = fresh.clone();
            b.gamma.value[j] = v;
            weighted_sum(&b.forward(x.view()), &c)
        };
        let num = numeric(&mut f, fresh.gamma.value[j], 1e-2);
        close(f64::from(bn.gamma.grad[j]), num, "BN dgamma");
    }
    // Running statistics moved toward the batch's; eval mode uses them, not the batch's.
    assert!(bn.running_mean.iter().any(|&m| m != 0.0));
    let eval = bn.apply(x.view());
    assert!((&eval - &y).iter().any(|d| d.abs() > 1e-3));
}

#[test]
fn softmax_ce_gradient_matches_finite_differences_with_and_without_weights() {
    let z = rand_matrix(5, 4, 8);
    let y = Targets::Classes(vec![0, 3, 1, 1, 2]);
    for loss in [
        Loss::softmax_ce(),
        Loss::SoftmaxCrossEntropy {
            class_weights: Some(vec![0.5, 2.0, 1.0, 3.0]),
        },
    ] {
        let (l, g) = loss.value_and_grad(z.view(), &y).unwrap();
        assert!(l > 0.0);
        for (r, c) in [(0, 0), (1, 3), (4, 1), (2, 2)] {
            let mut f = |v: f32| {
                let mut zz = z.clone();
                zz[[r, c]] = v;
                loss.value_and_grad(zz.view(), &y).unwrap().0
            };
            let num = numeric(&mut f, z[[r, c]], 1e-2);
            close(f64::from(g[[r, c]]), num, "CE dz");
        }
    }
    // Golden value: uniform logits over 4 classes give ln 4.
    let (l, _) = Loss::softmax_ce()
        .value_and_grad(Array2::zeros((2, 4)).view(), &Targets::Classes(vec![1, 2]))
        .unwrap();
    assert!((l - 4f64.ln()).abs() < 1e-9);
    assert!(Loss::softmax_ce()
        .value_and_grad(z.view(), &Targets::Classes(vec![0, 4, 0, 0, 0]))
        .is_err());
}

#[test]
fn focal_loss_gradient_and_golden_values() {
    let f = Focal {
        alpha: Some(0.25),
        gamma: 2.0,
    };
    // Golden: z = 0 gives p_t = 0.5, so FL = alpha_t * 0.25 * ln 2.
    let (l1, _) = f.value_and_grad(0.0, true);
    assert!((l1 - 0.25 * 0.25 * 2f64.ln()).abs() < 1e-12);
    let (l0, _) = f.value_and_grad(0.0, false);
    assert!((l0 - 0.75 * 0.25 * 2f64.ln()).abs() < 1e-12);
    // gamma 0 without alpha is BCE, whose gradient is p - y.
    let (l, g) = Focal::bce().value_and_grad(1.25, true);
    let p = 1.0 / (1.0 + (-1.25f64).exp());
    assert!((l + p.ln()).abs() < 1e-9 && (g - (p - 1.0)).abs() < 1e-9);
    let z = rand_matrix(4, 2, 9) * 2.0;
    let t = Targets::Binary(ndarray::array![
        [1.0, 0.0],
        [0.0, 0.0],
        [1.0, 1.0],
        [0.0, 1.0]
    ]);
    let loss = Loss::Sigmoid(vec![
        f,
        Focal {
            alpha: None,
            gamma: 1.0,
        },
    ]);
    let (_, g) = loss.value_and_grad(z.view(), &t).unwrap();
    for r in 0..4 {
        for c in 0..2 {
            let mut fd = |v: f32| {
                let mut zz = z.clone();
                zz[[r, c]] = v;
                loss.value_and_grad(zz.view(), &t).unwrap().0
            };
            let num = numeric(&mut fd, z[[r, c]], 1e-2);
            close(f64::from(g[[r, c]]), num, "focal dz");
        }
    }
    let bad = Targets::Binary(ndarray::array![
        [0.5, 0.0],
        [0.0, 0.0],
        [1.0, 1.0],
        [0.0, 1.0]
    ]);
    assert!(loss.value_and_grad(z.view(), &bad).is_err());
}

#[test]
fn mlp_backward_matches_finite_differences_through_batchnorm() {
    let spec = MlpSpec {
        sizes: vec![4, 6, 5, 3],
        batch_norm: true,
        output: Output::Softmax,
    };
    let mut net = Mlp::new(&spec, 11);
    net.input_grad = true;
    let x = rand_matrix(7, 4, 12);
    let y = Targets::Classes(vec![0, 1, 2, 0, 1, 2, 2]);
    let loss = Loss::softmax_ce();
    let base = net.clone();
    let z = net.forward_train(x.view());
    let (_, g) = loss.value_and_grad(z.view(), &y).unwrap();
    let dx = net.backward(g.view()).unwrap();
    let value = |m: &mut Mlp, xx: &Array2<f32>| {
        let z = m.forward_train(xx.view());
        loss.value_and_grad(z.view(), &y).unwrap().0
    };
    for (r, c) in [(0, 0), (3, 2), (6, 3)] {
        let mut f = |v: f32| {
            let mut xx = x.clone();
            xx[[r, c]] = v;
            value(&mut base.clone(), &xx)
        };
        let num = numeric(&mut f, x[[r, c]], 2e-3);
        close(f64::from(dx[[r, c]]), num, "MLP dx");
    }
    // A first-layer weight: its gradient flows through BN, ReLU and the second Linear.
    let grads: Vec<Vec<f32>> = net.params_mut().iter().map(|p| p.grad.clone()).collect();
    for i in [0, 5, 17] {
        let mut f = |v: f32| {
            let mut m = base.clone();
            m.params_mut()[0].value[i] = v;
            value(&mut m, &x)
        };
        let num = numeric(&mut f, base.clone().params_mut()[0].value[i], 2e-3);
        close(f64::from(grads[0][i]), num, "MLP dW1");
    }
    let p = net.predict(x.view());
    for row in p.rows() {
        assert!((row.sum() - 1.0).abs() < 1e-5);
    }
}

#[test]
fn training_learns_xor_and_is_deterministic() {
    let x = ndarray::array![[0.0f32, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]];
    let y = Targets::Classes(vec![0, 1, 1, 0]);
    let spec = MlpSpec {
        sizes: vec![2, 16, 2],
        batch_norm: false,
        output: Output::Softmax,
    };
    let cfg = TrainConfig {
        epochs: 300,
        batch_size: 4,
        lr: 0.03,
        ..TrainConfig::default()
    };
    let mut a = Mlp::new(&spec, 3);
    let hist = a.fit(x.view(), &y, &Loss::softmax_ce(), &cfg).unwrap();
    assert!(
        hist[hist.len() - 1] < 0.05,
        "final loss {}",
        hist[hist.len() - 1]
    );
    let p = a.predict(x.view());
    for (i, &c) in [0usize, 1, 1, 0].iter().enumerate() {
        assert!(p[[i, c]] > 0.9, "row {i}: {:?}", p.row(i));
    }
    let mut b = Mlp::new(&spec, 3);
    b.fit(x.view(), &y, &Loss::softmax_ce(), &cfg).unwrap();
    assert_eq!(a.predict(x.view()), b.predict(x.view()));
    let mut c = Mlp::new(&spec, 4);
    c.fit(x.view(), &y, &Loss::softmax_ce(), &cfg).unwrap();
    assert_ne!(a.predict(x.view()), c.predict(x.view()));
}
